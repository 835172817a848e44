// npm run learn -- --preset mqar-tiny [--engine webgpu|torch] [--mechanisms nsa,window,moba,dense,nsa-win] [--seeds 1,2]
//   [--lrs 1e-3,3e-3] [--steps N] [--batch N] [--target 0.99] [--eval-every N] [--eval-batches N]
//   [--budget KEYS] [--out DIR] [--jsonl FILE] [--variant NAME] [--no-figure] [--python PATH] [--threads N] [--set model.x=.. | train.x=.. | data.recall.x=..]
// Trains a task preset once per grid point (mechanism × seed × learning rate), each from the same
// seeded weights and data in either engine, stopping a run at the first evaluation whose held-out
// answer accuracy reaches --target. Prints JSON lines as it goes (one per evaluation and per run),
// writes them to DIR/results.jsonl with the figure DIR/accuracy.svg and .png (accuracy against step,
// chance marked), prints a table, and ends with one JSON line per mechanism: its best run's
// "mechanism", "keys_last_query", "accuracy", "steps", "reached", seed and lr. NSA's keys per query
// are also counted on every training step — by its forward kernels (WebGPU: the model's step
// statistics), from the step's selection (PyTorch: nsa.py keys_read): each eval line carries the
// last step's `keys_counted` per branch and each run the mean over its steps, `keys_counted_mean_query`
// (both over the steps at model.seqLen: a sequence-length warm-up's steps, train.shortSeqSteps, are not counted).
// Each eval line also carries `accuracy_by_answer`: [j] the accuracy of every sequence's j-th answer
// (passkey: digit j of the key), which shows which answers a model has not learned yet; a passkey's
// eval lines also carry `accuracy_by_depth`: the held-out keys split into PASSKEY_DEPTH_BINS (4) ranges of
// needle position, each with its whole-key accuracy and accuracy per digit (passkey-depth.ts).
// For NSA, MoBA and DSA each eval line carries `needle`, the routing of the held-out answers
// (src/train/eval/needle-read.ts; python/nsa_playground/needle.py): the share whose source — the
// earlier copy of the answer — each layer's selection read ("selected_by_layer"), that any layer read
// ("selected_any", the table's "needle sel" column), and the accuracy on each side of that split.
// --budget KEYS sets
// NSA, the window and MoBA to read at most KEYS key rows per query at the last position
// (src/definitions/budget.ts: matched budget); without it each is sized from the preset's NSA.
// --jsonl FILE: every JSON line is also appended to FILE as it comes (one write per line, so several
// runs can append to one file, and a run cut short keeps every line it printed; the device call's
// learn step: scripts/gpu/learn.sh). --variant NAME: a "variant" field on every JSON line, so that
// runs of one preset and mechanism with other settings (--set, --lrs) stay apart in a shared file
// (scripts/gpu/summarize.mjs keeps a row per preset, mechanism and variant). --no-figure: no SVG or PNG (the PNG launches Chromium).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { lastQueryKeys } from '../definitions/keys-read';
import { keysPerSequence } from '../definitions/model-flops';
import { describeAdapter } from '../gpu/context';
import { type RunConfig, shortSeqSteps } from '../train/config';
import type { NeedleScore } from '../train/eval/needle-read';
import { type DepthBin, passkeyDepthScore } from '../train/eval/passkey-depth';
import { taskDatasetForRun, trainAndScoreRecall } from '../train/eval/recall-eval';
import { taskChance } from '../train/eval/task-chance';
import { learnFigureSvg } from '../train/learn/figure';
import { DEFAULT_MECHANISMS, gridPoints, LEARN_PRESETS, type LearnPreset, type Mechanism, MECHANISM_NAMES } from '../train/learn/grid';
import { applySet, intFlag, numFlag, parseArgs } from './args';
import { type NeedleLine, runTorch, torchPython } from './learn-torch';
import { runMain } from './main';
import { UsageError } from './usage';

const ENGINES = ['webgpu', 'torch'] as const;
type Engine = (typeof ENGINES)[number];

const USAGE = `usage: npm run learn -- --preset ${LEARN_PRESETS.join('|')} [--engine ${ENGINES.join('|')}]
  [--mechanisms ${MECHANISM_NAMES.join(',')}] [--seeds 1,2] [--lrs 1e-3,3e-3] [--steps N] [--batch N] [--target 0.99]
  [--eval-every N] [--eval-batches N] [--budget KEYS] [--out DIR] [--jsonl FILE] [--variant NAME] [--no-figure] [--python PATH] [--threads N]
  [--set model.x=.. | train.x=.. | data.recall.x=..]`;

const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

interface RunResult {
  mechanism: Mechanism;
  /** Key rows the last query reads per group under the run's config (src/definitions/keys-read.ts). */
  keys_last_query: number;
  /** Key rows per query and head, the mean over positions 0 … T − 1 (keysPerQuery; NSA's selected rows an upper bound). */
  keys_mean_query: number;
  /**
   * NSA: key rows per query and group (all branches) as counted on every training step (WebGPU: by
   * the forward kernels, the step's last micro-batch; PyTorch: from the step's selection), the mean
   * over the steps and the layers; else null.
   */
  keys_counted_mean_query: number | null;
  seed: number;
  lr: number;
  accuracy: number;
  sequence_accuracy: number;
  steps: number;
  reached: boolean;
  seconds: number;
  curve: Array<{ step: number; accuracy: number }>;
  /** Per evaluation of a sparse mechanism: the needle selected (the figure's dotted line). */
  needleCurve: Array<{ step: number; share: number }>;
  /** The last evaluation's routing of the answers (NSA, MoBA, DSA; src/train/eval/needle-read.ts). */
  needle?: NeedleLine;
  /** Training loss of the first steps (engine parity). */
  first_losses: number[];
}

function list(text: string | undefined, flag: string, parse: (s: string) => number): number[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((s) => {
    const v = parse(s.trim());
    if (!Number.isFinite(v)) throw new UsageError(`--${flag}: '${s}' is not a number`, { flag, value: text });
    return v;
  });
}

/** Renders the SVG to PNG in headless Chromium (Playwright's, the e2e suite's browser); null when there is none. */
async function svgToPng(svg: string): Promise<Buffer | null> {
  try {
    const { chromium } = await import('@playwright/test');
    const browser = await chromium.launch({ executablePath: process.env.NSA_CHROMIUM ?? '/usr/bin/chromium' });
    try {
      const page = await browser.newPage({ viewport: { width: 720, height: 420 } });
      await page.setContent(`<body style="margin:0">${svg}</body>`);
      return await page.screenshot({ clip: { x: 0, y: 0, width: 720, height: 420 } });
    } finally {
      await browser.close();
    }
  } catch {
    return null;
  }
}

/** The table's keys per query: NSA's counted mean, else the config's mean over positions (marked '≤' where it is an upper bound). */
function keysPerQueryText(r: RunResult): string {
  if (r.keys_counted_mean_query !== null) return r.keys_counted_mean_query.toFixed(1);
  return `${r.mechanism === 'nsa' ? '≤' : ''}${r.keys_mean_query.toFixed(1)}`;
}

/** keysPerQuery's mean over the positions 0 … T − 1 of one sequence. */
const meanKeysPerQuery = (c: RunConfig): number => keysPerSequence(c.model) / c.model.seqLen;

/**
 * For a passkey run, scores an evaluation by needle depth: the held-out batches are regenerated once
 * (the dataset draws them from its seed: the ones either engine scores); null for any other task.
 */
function heldOutDepth(config: RunConfig): ((answersRight: string[]) => DepthBin[]) | null {
  if (config.data.source !== 'passkey') return null;
  const held = taskDatasetForRun(config).validationBatches(config.train.evalBatches);
  return (answersRight) => passkeyDepthScore(config, held, answersRight)!;
}

/** The WebGPU engine's NeedleScore in the eval lines' names (PyTorch's learn.py prints them so). */
const needleLine = (n: NeedleScore): NeedleLine => ({
  answers: n.answers,
  selected_by_layer: n.selectedByLayer,
  selected_any: n.selectedAny,
  accuracy_selected: n.accuracySelected,
  accuracy_missed: n.accuracyMissed,
});

/** The table's routing column: the last evaluation's share of answers whose source some layer selected. */
const needleText = (r: RunResult) => (r.needle?.selected_any == null ? '—' : `${(100 * r.needle.selected_any).toFixed(1)}%`);

/** A depth range as an eval line carries it. */
const depthLine = (d: DepthBin) => ({
  positions: [d.from, d.to],
  sequences: d.sequences,
  whole_keys: d.wholeKeys,
  accuracy_by_answer: d.accuracyByAnswer,
});

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), {
    values: [
      'preset',
      'engine',
      'mechanisms',
      'seeds',
      'lrs',
      'steps',
      'batch',
      'target',
      'eval-every',
      'eval-batches',
      'budget',
      'out',
      'jsonl',
      'variant',
      'python',
      'threads',
    ],
    booleans: ['help', 'no-figure'],
    sets: true,
    usage: USAGE,
  });
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  const engine = (args.flags.get('engine') ?? 'webgpu') as Engine;
  if (!ENGINES.includes(engine))
    throw new UsageError(`--engine: unknown engine '${engine}' (known: ${ENGINES.join(', ')})`, { flag: 'engine', value: engine });
  const presetName = args.flags.get('preset');
  if (!presetName)
    throw new UsageError(`--preset is required (one of ${LEARN_PRESETS.join(', ')})\n${USAGE}`, { flag: 'preset', value: '' });
  const preset = presetName as LearnPreset;
  const threads = intFlag(args, 'threads');
  if (threads !== undefined && threads < 1)
    throw new UsageError(`--threads: must be ≥ 1 (got ${threads})`, { flag: 'threads', value: String(threads) });
  // Every check (flags, each grid point's config, the python) before any training.
  const points = gridPoints(
    {
      preset,
      mechanisms: (args.flags.get('mechanisms') ?? DEFAULT_MECHANISMS.join(',')).split(',').filter(Boolean) as Mechanism[],
      seeds: list(args.flags.get('seeds'), 'seeds', Number) ?? [1],
      lrs: list(args.flags.get('lrs'), 'lrs', Number),
      steps: intFlag(args, 'steps'),
      batchSize: intFlag(args, 'batch'),
      target: numFlag(args, 'target') ?? 0.99,
      evalEvery: intFlag(args, 'eval-every'),
      evalBatches: intFlag(args, 'eval-batches'),
      budget: numFlag(args, 'budget'),
    },
    (c) => {
      const target = { model: c.model, train: c.train, data: c.data };
      for (const [path, value] of args.sets) applySet(target, path, value);
    },
  );
  const base = points[0].config;
  const target = numFlag(args, 'target') ?? 0.99;
  const python = engine === 'torch' ? torchPython(args.flags.get('python')) : null;
  const dir = resolve(args.flags.get('out') ?? join('build', 'learn', `${preset}-${engine}`));
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  const jsonl = args.flags.get('jsonl');
  if (jsonl !== undefined && !jsonl) throw new UsageError('--jsonl: names no file', { flag: 'jsonl', value: jsonl });
  const variant = args.flags.get('variant');
  if (variant !== undefined && !/^[A-Za-z0-9._=-]+$/.test(variant))
    throw new UsageError(`--variant: '${variant}' must be letters, digits and . _ = - (a name for the run's settings)`, {
      flag: 'variant',
      value: variant,
    });
  const record = (fields: Record<string, unknown>) => {
    // The variant right after the kind (first on the closing lines, which have none).
    const o = variant === undefined ? fields : 'kind' in fields ? { kind: fields.kind, variant, ...fields } : { variant, ...fields };
    out(o);
    const line = JSON.stringify(o);
    lines.push(line);
    if (jsonl) appendFileSync(jsonl, line + '\n');
  };
  const chance = taskChance(base)!;
  const gpu = engine === 'webgpu' ? await (await import('../gpu/node-device')).acquireNodeGpu({ announce: false }) : null;
  record({
    kind: 'grid',
    preset,
    engine,
    device: gpu ? describeAdapter(gpu.adapter) : `PyTorch (${python})`,
    chance,
    seqLen: base.model.seqLen,
    task: base.data.recall ?? base.data.passkey,
    points: points.length,
    mechanisms: [...new Set(points.map((p) => p.mechanism))],
    // Key rows per query and group by each mechanism's config: at the last query and the mean over positions.
    keys_per_query: Object.fromEntries(
      points.map((p) => [
        p.mechanism,
        { last_query: lastQueryKeys(p.config.model.seqLen, p.config.model), mean: meanKeysPerQuery(p.config) },
      ]),
    ),
    steps: base.train.steps,
    target,
  });
  const results: RunResult[] = [];
  try {
    for (const p of points) {
      const { evalBatches, evalEvery, steps } = p.config.train;
      const r: RunResult = {
        mechanism: p.mechanism,
        keys_last_query: lastQueryKeys(p.config.model.seqLen, p.config.model),
        keys_mean_query: meanKeysPerQuery(p.config),
        keys_counted_mean_query: null,
        seed: p.seed,
        lr: p.lr,
        accuracy: 0,
        sequence_accuracy: 0,
        steps: 0,
        reached: false,
        seconds: 0,
        curve: [],
        needleCurve: [],
        first_losses: [],
      };
      const t0 = performance.now();
      // NSA's counts: the last step's per branch, and the running sum of totals, over the steps at
      // model.seqLen (a sequence-length warm-up's steps read the keys of its shorter sequences).
      let counted: [number, number, number] | undefined;
      let countedSum = 0;
      let countedSteps = 0;
      const warmSteps = shortSeqSteps(p.config.train);
      const countStep = (step: number, k: [number, number, number]) => {
        if (step < warmSteps) return;
        counted = k;
        countedSum += k[0] + k[1] + k[2];
        countedSteps++;
      };
      const depthOf = heldOutDepth(p.config);
      const onEval = (
        step: number,
        accuracy: number,
        sequenceAccuracy: number,
        accuracyByAnswer: number[],
        answersRight: string[],
        needle: NeedleLine | undefined,
      ) => {
        r.curve.push({ step, accuracy });
        if (needle?.selected_any != null) r.needleCurve.push({ step, share: needle.selected_any });
        Object.assign(r, { accuracy, sequence_accuracy: sequenceAccuracy, steps: step, reached: accuracy >= target, needle });
        record({
          kind: 'eval',
          preset,
          mechanism: p.mechanism,
          seed: p.seed,
          lr: p.lr,
          step,
          accuracy,
          sequence_accuracy: sequenceAccuracy,
          accuracy_by_answer: accuracyByAnswer,
          ...(depthOf && { accuracy_by_depth: depthOf(answersRight).map(depthLine) }),
          ...(counted && { keys_counted: { cmp: counted[0], sel: counted[1], win: counted[2] } }),
          ...(needle && { needle }),
          seconds: (performance.now() - t0) / 1000,
        });
      };
      if (gpu) {
        const res = await trainAndScoreRecall(gpu, p.config, {
          evalBatches,
          evalEvery,
          stopAt: target,
          onStep: (m) => {
            if (r.first_losses.length < 20) r.first_losses.push(m.loss);
            if (m.nsa?.keysPerQuery) countStep(m.step, m.nsa.keysPerQuery);
          },
          onEval: (step, s) =>
            onEval(step + 1, s.accuracy, s.sequenceAccuracy, s.accuracyByAnswer, s.answersRight, s.needle && needleLine(s.needle)),
        });
        const s = res.score;
        if (res.steps !== r.steps)
          onEval(res.steps, s.accuracy, s.sequenceAccuracy, s.accuracyByAnswer, s.answersRight, s.needle && needleLine(s.needle));
      } else {
        await runTorch(p.config, taskDatasetForRun(p.config), {
          python: python!,
          evalBatches,
          evalEvery,
          target,
          threads,
          onLine: (l) => {
            if (l.kind === 'step' && r.first_losses.length < 20) r.first_losses.push(l.loss!);
            if (l.kind === 'step' && l.keys_counted) countStep(l.step - 1, [l.keys_counted.cmp, l.keys_counted.sel, l.keys_counted.win]);
            if (l.kind === 'eval') onEval(l.step, l.accuracy!, l.sequence_accuracy!, l.accuracy_by_answer!, l.answers_right!, l.needle);
          },
        });
      }
      r.seconds = (performance.now() - t0) / 1000;
      if (countedSteps > 0) r.keys_counted_mean_query = countedSum / countedSteps;
      results.push(r);
      const { curve: _curve, needleCurve: _needleCurve, ...summary } = r;
      record({ kind: 'run', engine, preset, ...summary, steps_planned: steps });
    }
  } finally {
    gpu?.destroy();
  }
  // The figure: one line per grid point, labelled by what differs.
  const label = (r: RunResult) =>
    [r.mechanism, points.some((q) => q.seed !== r.seed) ? `seed ${r.seed}` : '', points.some((q) => q.lr !== r.lr) ? `lr ${r.lr}` : '']
      .filter(Boolean)
      .join(', ');
  const figure = !args.flags.has('no-figure');
  let png: Buffer | null = null;
  if (figure) {
    const svg = learnFigureSvg({
      title: `${preset}: held-out answer accuracy (${engine})`,
      curves: results.map((r) => ({ label: label(r), mechanism: r.mechanism, points: r.curve, needle: r.needleCurve })),
      chance,
      steps: base.train.steps,
    });
    writeFileSync(join(dir, 'accuracy.svg'), svg);
    png = await svgToPng(svg);
    if (png) writeFileSync(join(dir, 'accuracy.png'), png);
  }
  // Best run per mechanism: highest accuracy, then fewest steps.
  const best = new Map<Mechanism, RunResult>();
  for (const r of results) {
    const b = best.get(r.mechanism);
    if (!b || r.accuracy > b.accuracy || (r.accuracy === b.accuracy && r.steps < b.steps)) best.set(r.mechanism, r);
  }
  const pct = (v: number) => `${(100 * v).toFixed(1)}%`.padStart(7);
  const table = [
    `${preset} (${engine}), chance ${pct(chance).trim()}, target ${pct(target).trim()}:`,
    '  mechanism  keys@T-1  keys/query  seed  lr        accuracy  whole seq  needle sel  steps  reached  minutes',
    ...results.map(
      (r) =>
        `  ${r.mechanism.padEnd(9)}  ${String(r.keys_last_query).padStart(8)}  ${keysPerQueryText(r).padStart(10)}  ${String(r.seed).padEnd(4)}  ${String(r.lr).padEnd(8)}  ${pct(r.accuracy)}   ${pct(r.sequence_accuracy)}  ${needleText(r).padStart(10)}  ${String(r.steps).padStart(5)}  ${(r.reached ? 'yes' : 'no').padEnd(7)}  ${(r.seconds / 60).toFixed(1).padStart(7)}`,
    ),
    `  results: ${join(dir, 'results.jsonl')}; ` +
      (figure ? `figure: ${join(dir, 'accuracy.svg')}${png ? ' and .png' : ' (no PNG: no Chromium)'}` : 'no figure (--no-figure)'),
  ];
  console.log(table.join('\n'));
  for (const [mechanism, r] of best)
    record({
      mechanism,
      keys_last_query: r.keys_last_query,
      keys_mean_query: r.keys_mean_query,
      keys_counted_mean_query: r.keys_counted_mean_query,
      accuracy: r.accuracy,
      ...(r.needle && { needle_selected: r.needle.selected_any }),
      steps: r.steps,
      reached: r.reached,
      seed: r.seed,
      lr: r.lr,
      engine,
      preset,
      minutes: r.seconds / 60,
    });
  writeFileSync(join(dir, 'results.jsonl'), lines.join('\n') + '\n');
  return 0;
}

runMain(main, { stack: false });
