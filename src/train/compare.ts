// Comparing runs: which settings differ, and the final and best metrics of each. Pure data: the
// CLI's `npm run compare` prints it, the page's comparison view shows the same tables.
import type { RunConfig } from './config';
import type { EvalMetrics, StepMetrics } from './types';

export interface ComparedRun {
  name: string;
  config: RunConfig;
  metrics: readonly StepMetrics[];
  evals: readonly EvalMetrics[];
}

export interface RunFigures {
  name: string;
  attention: string;
  steps: number;
  finalLoss: number | null;
  bestLoss: number | null;
  bestLossStep: number | null;
  finalValLoss: number | null;
  bestValLoss: number | null;
  bestValStep: number | null;
  /** Median over the steps after the first (the first carries pipeline compilation). */
  medianTokensPerSecond: number | null;
  /** NSA: the last step's mean gate per branch (cmp, sel, win). */
  finalGates: [number, number, number] | null;
}

export interface Comparison {
  /** Settings that are not the same in every run: path → each run's value (undefined: absent). */
  differences: Array<{ path: string; values: unknown[] }>;
  runs: RunFigures[];
}

/** A config as its settings, path → value; the gate ablation is one setting. */
export function settingsOf(c: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (v: unknown, path: string) => {
    const leaf = v === null || typeof v !== 'object' || Array.isArray(v) || path.endsWith('.gates');
    if (leaf && path) out.set(path, v);
    else if (!leaf) for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(c, prefix);
  return out;
}

function best<T>(xs: readonly T[], value: (x: T) => number): T | null {
  let b: T | null = null;
  for (const x of xs) if (Number.isFinite(value(x)) && (b === null || value(x) < value(b))) b = x;
  return b;
}

function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function figuresOf(r: ComparedRun): RunFigures {
  const last = r.metrics.at(-1) ?? null;
  const bl = best(r.metrics, (m) => m.loss);
  const bv = best(r.evals, (e) => e.valLoss);
  return {
    name: r.name,
    attention: r.config.model.attention,
    steps: r.metrics.length,
    finalLoss: last?.loss ?? null,
    bestLoss: bl?.loss ?? null,
    bestLossStep: bl?.step ?? null,
    finalValLoss: r.evals.at(-1)?.valLoss ?? null,
    bestValLoss: bv?.valLoss ?? null,
    bestValStep: bv?.step ?? null,
    medianTokensPerSecond: median(r.metrics.slice(1).map((m) => m.tokensPerSecond)),
    finalGates: last?.nsa?.gateMean ?? null,
  };
}

export function compareRuns(runs: readonly ComparedRun[]): Comparison {
  const settings = runs.map((r) => settingsOf(r.config));
  const paths: string[] = [];
  for (const s of settings) for (const p of s.keys()) if (!paths.includes(p)) paths.push(p);
  const differences = paths
    .map((path) => ({ path, values: settings.map((s) => s.get(path)) }))
    .filter((d) => d.values.some((v) => JSON.stringify(v) !== JSON.stringify(d.values[0])));
  return { differences, runs: runs.map(figuresOf) };
}

/** A setting's value as the comparison shows it (CLI and page): numbers as written, '—' when absent, anything else as JSON. */
export const formatSettingValue = (v: unknown): string =>
  v === undefined || v === null ? '—' : typeof v === 'number' ? String(v) : JSON.stringify(v);

/** The columns of one run's figures (figureCells), as the CLI and the page show them. */
export const FIGURE_COLUMNS = [
  'run',
  'attention',
  'steps',
  'final loss',
  'best loss',
  'final val',
  'best val',
  'tok/s (median)',
  'gates cmp/sel/win',
] as const;

/** One run's figures as text cells, in FIGURE_COLUMNS order. */
export function figureCells(r: RunFigures): string[] {
  const loss = (v: number | null) => (v === null ? '—' : v.toFixed(4));
  const at = (v: number | null, step: number | null) => (v === null ? '—' : `${loss(v)} @${step}`);
  return [
    r.name,
    r.attention,
    String(r.steps),
    loss(r.finalLoss),
    at(r.bestLoss, r.bestLossStep),
    loss(r.finalValLoss),
    at(r.bestValLoss, r.bestValStep),
    r.medianTokensPerSecond === null ? '—' : r.medianTokensPerSecond.toFixed(0),
    r.finalGates ? r.finalGates.map((g) => g.toFixed(3)).join('/') : '—',
  ];
}

/** The comparison as text: the settings that differ, then one line of figures per run. */
export function formatComparison(c: Comparison): string[] {
  const names = c.runs.map((r) => r.name);
  const table = (header: string[], rows: string[][]): string[] => {
    const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) =>
      cells
        .map((x, i) => x.padEnd(w[i]))
        .join('  ')
        .trimEnd();
    return [line(header), line(w.map((n) => '-'.repeat(n))), ...rows.map(line)];
  };
  const out: string[] = [];
  out.push(c.differences.length ? 'settings that differ:' : 'settings: identical');
  if (c.differences.length)
    out.push(
      ...table(
        ['setting', ...names],
        c.differences.map((d) => [d.path, ...d.values.map((v) => formatSettingValue(v))]),
      ),
    );
  out.push('', 'metrics:');
  out.push(
    ...table(
      [...FIGURE_COLUMNS],
      c.runs.map((r) => figureCells(r)),
    ),
  );
  return out;
}
