// The grid of `npm run learn`: a task preset trained once per (mechanism, seed, learning rate), each
// point's run config, and the checks that refuse a bad grid before any training (each names its flag
// or config field). Browser-safe: the page's sweep can use it too.
import { type BudgetMechanism, matchBudget, type MatchedConfigs } from '../../definitions/budget';
import { type ConfigIssue, InvalidConfigError } from '../../definitions/config-issue';
import { type RunConfig, shortSeqSteps, validateRunConfig } from '../config';
import { configForMode, type RecallMode } from '../eval/recall-eval';
import { MQAR_PRESET_NAMES, mqarPresetConfig, type MqarPresetName } from '../presets/mqar-preset';
import { passkeyLongPreset } from '../presets/passkey-long-preset';
import { passkeyPreset } from '../presets/passkey-preset';
import { recallPreset } from '../presets/recall-preset';

/** The task presets a learning grid trains. */
export const LEARN_PRESETS = [...MQAR_PRESET_NAMES, 'recall', 'passkey', 'passkey-long'] as const;
export type LearnPreset = (typeof LEARN_PRESETS)[number];

/**
 * The mechanisms a grid compares: NSA; the window and MoBA mechanisms (docs/nsa-spec.md section 15)
 * sized from the preset's NSA settings (window w = nsa.w; MoBA blocks of nsa.lSel, topK = nsa.nSel, so
 * each reads what the matching NSA branch reads); dense; 'nsa-win', NSA with its gates forced to
 * the window branch (the ablation the window baseline was before it was a mechanism of its own); and
 * 'dsa' (docs/dsa-spec.md; either engine), top-k = NSA's selected positions plus its window,
 * nSel·lSel + w, with a 2-head indexer of width dk/2 (even) and a dense warm-up of 5 % of the steps.
 */
export const MECHANISM_NAMES = ['nsa', 'window', 'moba', 'dense', 'nsa-win', 'dsa'] as const;
export type Mechanism = (typeof MECHANISM_NAMES)[number];
/** What `npm run learn` compares when --mechanisms is not given. */
export const DEFAULT_MECHANISMS: readonly Mechanism[] = ['nsa', 'window', 'moba', 'dense'];

/** The run config of one mechanism from a preset's (which must carry model.nsa settings unless dense). */
export function configForMechanism(base: RunConfig, m: Mechanism): RunConfig {
  if (m === 'nsa' || m === 'dense' || m === 'nsa-win') return configForMode(base, MECHANISM_MODES[m]);
  const c = structuredClone(base);
  const nsa = c.model.nsa;
  if (!nsa) throw new Error(`mechanism '${m}' is sized from model.nsa settings, which this config lacks`);
  c.model.attention = m;
  if (m === 'window') c.model.window = { w: Math.min(nsa.w, c.model.seqLen) };
  else if (m === 'dsa')
    c.model.dsa = {
      indexHeads: 2,
      indexDim: Math.max(2, 2 * Math.floor(c.model.dk / 4)),
      topK: Math.min(nsa.nSel * nsa.lSel + nsa.w, c.model.seqLen),
      warmupSteps: Math.round(c.train.steps / 20),
      lossWeight: 1,
    };
  else c.model.moba = { blockSize: nsa.lSel, topK: Math.min(nsa.nSel, Math.ceil(c.model.seqLen / nsa.lSel)) };
  return c;
}

/** The grid's mechanisms matched to a budget of R key rows per query at T − 1, or the refusal naming --budget. */
function budgetConfigs(base: RunConfig, mechanisms: readonly Mechanism[], R: number): MatchedConfigs {
  const nsa = base.model.nsa;
  if (!nsa) throw new InvalidConfigError('learn', [{ field: '--budget', message: 'needs a preset with model.nsa settings to size from' }]);
  const only: BudgetMechanism[] = [];
  if (mechanisms.includes('nsa')) only.push('nsa');
  if (mechanisms.includes('window') || mechanisms.includes('nsa-win')) only.push('window');
  if (mechanisms.includes('moba')) only.push('moba');
  if (mechanisms.includes('dsa')) only.push('dsa');
  // Only dsa's topK is read back (applyBudget): the rest of its base is a placeholder.
  const r = matchBudget(
    R,
    base.model.seqLen,
    { nsa, moba: { blockSize: nsa.lSel }, dsa: { indexHeads: 1, indexDim: 2, warmupSteps: 0, lossWeight: 1 } },
    only,
  );
  if ('issues' in r)
    throw new InvalidConfigError(
      'learn',
      r.issues.map((i) => ({ field: '--budget', message: `${i.field}: ${i.message}` })),
    );
  return r.configs;
}

/** A mechanism's config set to the matched budget (dense reads every key whatever the budget). */
function applyBudget(c: RunConfig, m: Mechanism, matched: MatchedConfigs): void {
  if (m === 'nsa') c.model.nsa = { ...c.model.nsa!, nSel: matched.nsa.nSel, w: matched.nsa.w };
  else if (m === 'nsa-win') c.model.nsa = { ...c.model.nsa!, w: matched.window.w };
  else if (m === 'window') c.model.window = { ...matched.window };
  else if (m === 'moba') c.model.moba = { ...matched.moba };
  else if (m === 'dsa') c.model.dsa = { ...c.model.dsa!, topK: matched.dsa.topK };
}

const MECHANISM_MODES = { nsa: 'nsa', dense: 'dense', 'nsa-win': 'win' } as const satisfies Record<string, RecallMode>;

export interface LearnGrid {
  preset: LearnPreset;
  mechanisms: Mechanism[];
  seeds: number[];
  /** Peak learning rates (default: the preset's). */
  lrs?: number[];
  /** Steps per run (default: the preset's). */
  steps?: number;
  batchSize?: number;
  /** Stop a run at the first evaluation with this held-out answer accuracy (0, 1]. */
  target: number;
  evalEvery?: number;
  evalBatches?: number;
  /**
   * Matched budget (src/definitions/budget.ts): key rows per query at T − 1 that NSA, the window and
   * MoBA (and NSA's window ablation) are set to read at most; absent: each sized from the preset as
   * configForMechanism says.
   */
  budget?: number;
}

export interface GridPoint {
  mechanism: Mechanism;
  seed: number;
  lr: number;
  config: RunConfig;
}

export function learnPresetConfig(name: LearnPreset): RunConfig {
  if (name === 'recall') return recallPreset();
  if (name === 'passkey') return passkeyPreset();
  if (name === 'passkey-long') return passkeyLongPreset();
  return mqarPresetConfig(name as MqarPresetName);
}

/**
 * Every point of the grid with its run config, after `edit` (the CLI's --set) is applied to the
 * preset; throws InvalidConfigError naming every bad flag or field before any training.
 */
export function gridPoints(g: LearnGrid, edit: (c: RunConfig) => void = () => {}): GridPoint[] {
  const bad: ConfigIssue[] = [];
  if (!(LEARN_PRESETS as readonly string[]).includes(g.preset))
    throw new InvalidConfigError('learn', [
      { field: '--preset', message: `unknown preset '${g.preset}' (known: ${LEARN_PRESETS.join(', ')})` },
    ]);
  if (!g.mechanisms.length) bad.push({ field: '--mechanisms', message: 'names no mechanism' });
  for (const m of g.mechanisms)
    if (!(MECHANISM_NAMES as readonly string[]).includes(m))
      bad.push({ field: '--mechanisms', message: `unknown mechanism '${m}' (known: ${MECHANISM_NAMES.join(', ')})` });
  if (!g.seeds.length) bad.push({ field: '--seeds', message: 'names no seed' });
  for (const s of g.seeds)
    if (!(Number.isInteger(s) && s >= 0 && s <= 0xffffffff))
      bad.push({ field: '--seeds', message: `must be integers in [0, 2^32) (got ${s})` });
  if (g.lrs && !g.lrs.length) bad.push({ field: '--lrs', message: 'names no learning rate' });
  for (const lr of g.lrs ?? [])
    if (!(Number.isFinite(lr) && lr > 0 && lr < 1)) bad.push({ field: '--lrs', message: `learning rates must be in (0, 1) (got ${lr})` });
  if (!(Number.isFinite(g.target) && g.target > 0 && g.target <= 1))
    bad.push({ field: '--target', message: `must be an accuracy in (0, 1] (got ${g.target})` });
  for (const [flag, v] of [
    ['--steps', g.steps],
    ['--batch', g.batchSize],
    ['--eval-every', g.evalEvery],
    ['--eval-batches', g.evalBatches],
  ] as const)
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) bad.push({ field: flag, message: `must be a positive integer (got ${v})` });
  if (g.budget !== undefined && !(Number.isInteger(g.budget) && g.budget >= 1))
    bad.push({ field: '--budget', message: `must be a whole number of key rows per query ≥ 1 (got ${g.budget})` });
  if (bad.length) throw new InvalidConfigError('learn', bad);
  const base = learnPresetConfig(g.preset);
  if (g.steps !== undefined) {
    // The preset's schedule shape: a sequence-length warm-up keeps its share of the steps.
    const warm = shortSeqSteps(base.train);
    if (warm) base.train.shortSeqSteps = Math.round((warm * g.steps) / base.train.steps);
    base.train.steps = g.steps;
  }
  if (g.batchSize !== undefined) base.train.batchSize = g.batchSize;
  if (g.evalEvery !== undefined) base.train.evalEvery = g.evalEvery;
  if (g.evalBatches !== undefined) base.train.evalBatches = g.evalBatches;
  edit(base);
  const matched = g.budget === undefined ? undefined : budgetConfigs(base, g.mechanisms, g.budget);
  const points: GridPoint[] = [];
  for (const mechanism of g.mechanisms)
    for (const seed of g.seeds)
      for (const lr of g.lrs ?? [base.train.lrMax]) {
        const config = configForMechanism(base, mechanism);
        if (matched) applyBudget(config, mechanism, matched);
        config.train.seed = seed;
        config.train.lrMax = lr;
        // The preset's schedule shape: lrMin keeps its ratio to lrMax.
        config.train.lrMin = (base.train.lrMin * lr) / base.train.lrMax;
        points.push({ mechanism, seed, lr, config });
      }
  const issues = points.flatMap((p) => validateRunConfig(p.config));
  if (issues.length) throw new InvalidConfigError('learn', [...new Map(issues.map((i) => [`${i.field}: ${i.message}`, i])).values()]);
  return points;
}
