// A checkpoint's metric history as F64 columns (one value per row, rows in order), so the header
// holds state, not history, and a 10^6-step run checkpoints like a short one. Every JS number
// round-trips exactly (F64), NaN and ±Infinity included. Columns, R step rows and E eval rows:
//   metrics.step, metrics.loss, metrics.lr, metrics.grad_norm, metrics.tokens_per_second,
//   metrics.step_ms, metrics.elapsed_ms                                          [R]
//   NSA runs only (all six or none): metrics.nsa.present (1/0) [R], metrics.nsa.gate_mean [R, 3],
//   metrics.nsa.histogram [R, H], metrics.nsa.invalid [R], metrics.nsa.layer_gate_mean [R, L, 3],
//   metrics.nsa.layer_invalid [R, L]; metrics.nsa.keys_per_query [R, 3] where every NSA row has
//   it (histories from before the kernels counted have none)
//   DSA runs only (both or none): metrics.index_loss, metrics.has_index_loss (1/0)  [R]
//   evals.step, evals.val_loss, evals.accuracy, evals.has_accuracy (1/0)          [E]
//   evals.accuracy_by_answer [E, A] where every eval has A ≥ 1 of them (task runs; histories
//   from before 2026-11-28 have none)
//   evals.keys_by_depth [E, D, 4] where every eval has D ≥ 1 ranges of needle position (passkey
//   runs): per range from, to, keys, keys right whole (histories from before it have none)
//   evals.needle_selected [E] where every eval has it (task runs of NSA, MoBA, DSA; histories from
//   before it have none)
// Browser-safe.
import type { EvalMetrics, NsaStepStats, StepMetrics } from '../types';
import type { NamedTensor } from './safetensors';

/** Tensor-name prefixes of the history columns: the only tensors that may hold NaN/±Infinity. */
export const HISTORY_PREFIXES = ['metrics.', 'evals.'] as const;

/** Column names of StepMetrics' scalars: a field added to StepMetrics without a column is a type error. */
const STEP_COLUMNS = {
  step: 'metrics.step',
  loss: 'metrics.loss',
  lr: 'metrics.lr',
  gradNorm: 'metrics.grad_norm',
  tokensPerSecond: 'metrics.tokens_per_second',
  stepMs: 'metrics.step_ms',
  elapsedMs: 'metrics.elapsed_ms',
} as const satisfies Record<Exclude<keyof StepMetrics, 'nsa' | 'indexLoss'>, string>;

/** DSA's indexer loss (StepMetrics.indexLoss), with a flag column: written when any row has one. */
const INDEX_LOSS = 'metrics.index_loss';
const HAS_INDEX_LOSS = 'metrics.has_index_loss';

const NSA_COLUMNS = {
  gateMean: 'metrics.nsa.gate_mean',
  histogram: 'metrics.nsa.histogram',
  invalid: 'metrics.nsa.invalid',
  perLayer: 'metrics.nsa.layer_gate_mean',
  keysPerQuery: 'metrics.nsa.keys_per_query',
} as const satisfies Record<keyof NsaStepStats, string>;
const NSA_LAYER_COLUMNS = {
  gateMean: 'metrics.nsa.layer_gate_mean',
  invalid: 'metrics.nsa.layer_invalid',
} as const satisfies Record<keyof NsaStepStats['perLayer'][number], string>;
const NSA_PRESENT = 'metrics.nsa.present';

const EVAL_COLUMNS = {
  step: 'evals.step',
  valLoss: 'evals.val_loss',
  accuracy: 'evals.accuracy',
  accuracyByAnswer: 'evals.accuracy_by_answer',
  keysByDepth: 'evals.keys_by_depth',
  needleSelected: 'evals.needle_selected',
} as const satisfies Record<keyof EvalMetrics, string>;
const EVAL_HAS_ACCURACY = 'evals.has_accuracy';

/** StepMetrics' scalar fields (version-1 rows are checked for them). */
export const STEP_FIELDS = Object.keys(STEP_COLUMNS) as Array<keyof typeof STEP_COLUMNS>;

const column = (name: string, shape: number[], data: Float64Array): NamedTensor => ({ name, shape, data, nonFinite: 'allowed' });

/** The history columns of these rows (F64, NaN/±Infinity allowed). Throws if NSA rows disagree on histogram or layer count. */
export function encodeHistory(metrics: readonly StepMetrics[], evals: readonly EvalMetrics[]): NamedTensor[] {
  const R = metrics.length;
  const out: NamedTensor[] = [];
  for (const [field, name] of Object.entries(STEP_COLUMNS) as Array<[keyof typeof STEP_COLUMNS, string]>) {
    const data = new Float64Array(R);
    for (let i = 0; i < R; i++) data[i] = metrics[i][field];
    out.push(column(name, [R], data));
  }
  if (metrics.some((m) => m.indexLoss !== undefined)) {
    const value = new Float64Array(R);
    const has = new Float64Array(R);
    metrics.forEach((m, i) => {
      if (m.indexLoss === undefined) return;
      value[i] = m.indexLoss;
      has[i] = 1;
    });
    out.push(column(INDEX_LOSS, [R], value), column(HAS_INDEX_LOSS, [R], has));
  }
  const first = metrics.find((m) => m.nsa)?.nsa;
  if (first) {
    const H = first.histogram.length;
    const L = first.perLayer.length;
    const present = new Float64Array(R);
    const gate = new Float64Array(R * 3);
    const hist = new Float64Array(R * H);
    const invalid = new Float64Array(R);
    const layerGate = new Float64Array(R * L * 3);
    const layerInvalid = new Float64Array(R * L);
    const withKeys = metrics.every((m) => !m.nsa || m.nsa.keysPerQuery);
    const keys = new Float64Array(R * 3);
    for (let i = 0; i < R; i++) {
      const s = metrics[i].nsa;
      if (!s) continue;
      if (s.histogram.length !== H || s.perLayer.length !== L)
        throw new Error(
          `checkpoint history: metrics[${i}].nsa has ${s.histogram.length} histogram bins and ${s.perLayer.length} layers, earlier rows ${H} and ${L}`,
        );
      present[i] = 1;
      gate.set(s.gateMean, 3 * i);
      hist.set(s.histogram, H * i);
      invalid[i] = s.invalid;
      if (withKeys) keys.set(s.keysPerQuery!, 3 * i);
      s.perLayer.forEach((l, j) => {
        layerGate.set(l.gateMean, 3 * (L * i + j));
        layerInvalid[L * i + j] = l.invalid;
      });
    }
    out.push(
      column(NSA_PRESENT, [R], present),
      column(NSA_COLUMNS.gateMean, [R, 3], gate),
      column(NSA_COLUMNS.histogram, [R, H], hist),
      column(NSA_COLUMNS.invalid, [R], invalid),
      column(NSA_LAYER_COLUMNS.gateMean, [R, L, 3], layerGate),
      column(NSA_LAYER_COLUMNS.invalid, [R, L], layerInvalid),
    );
    if (withKeys) out.push(column(NSA_COLUMNS.keysPerQuery, [R, 3], keys));
  }
  const E = evals.length;
  const step = new Float64Array(E);
  const valLoss = new Float64Array(E);
  const accuracy = new Float64Array(E);
  const hasAccuracy = new Float64Array(E);
  evals.forEach((e, i) => {
    step[i] = e.step;
    valLoss[i] = e.valLoss;
    if (e.accuracy !== undefined) {
      accuracy[i] = e.accuracy;
      hasAccuracy[i] = 1;
    }
  });
  out.push(
    column(EVAL_COLUMNS.step, [E], step),
    column(EVAL_COLUMNS.valLoss, [E], valLoss),
    column(EVAL_COLUMNS.accuracy, [E], accuracy),
    column(EVAL_HAS_ACCURACY, [E], hasAccuracy),
  );
  // Per answer: only where every evaluation has the same A ≥ 1 answers (a task run's evaluations).
  const A = evals[0]?.accuracyByAnswer?.length ?? 0;
  if (A > 0 && evals.every((e) => e.accuracyByAnswer?.length === A)) {
    const byAnswer = new Float64Array(E * A);
    evals.forEach((e, i) => byAnswer.set(e.accuracyByAnswer!, A * i));
    out.push(column(EVAL_COLUMNS.accuracyByAnswer, [E, A], byAnswer));
  }
  // By needle depth: likewise only where every evaluation has the same D ≥ 1 ranges (a passkey run's).
  const D = evals[0]?.keysByDepth?.length ?? 0;
  if (D > 0 && evals.every((e) => e.keysByDepth?.length === D)) {
    const byDepth = new Float64Array(E * D * 4);
    evals.forEach((e, i) => e.keysByDepth!.forEach((d, j) => byDepth.set([d.from, d.to, d.sequences, d.keysRight], 4 * (D * i + j))));
    out.push(column(EVAL_COLUMNS.keysByDepth, [E, D, 4], byDepth));
  }
  if (E > 0 && evals.every((e) => e.needleSelected !== undefined))
    out.push(
      column(
        EVAL_COLUMNS.needleSelected,
        [E],
        Float64Array.from(evals, (e) => e.needleSelected!),
      ),
    );
  return out;
}

type Fail = (field: string, detail: string) => never;
type Columns = ReadonlyMap<string, { shape: number[]; data: Float64Array }>;

/** Rows back from the history columns; every column's shape and every integer/flag column's values are checked (errors name the tensor). */
export function decodeHistory(f64: Columns, fail: Fail): { metrics: StepMetrics[]; evals: EvalMetrics[] } {
  const used = new Set<string>();
  const get = (name: string, shape: number[]): Float64Array => {
    const t = f64.get(name);
    if (!t) return fail(name, `history column missing (expected shape [${shape.join(', ')}])`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => shape[i] >= 0 && d !== shape[i]))
      fail(name, `expected shape [${shape.map((d) => (d < 0 ? '*' : d)).join(', ')}], found [${t.shape.join(', ')}]`);
    used.add(name);
    return t.data;
  };
  /** Integer values in [min, max]; with `present`, only in rows it flags (each row `per` values wide). */
  const integers = (name: string, data: Float64Array, min: number, max = Number.MAX_SAFE_INTEGER, present?: Float64Array, per = 1) => {
    for (let i = 0; i < data.length; i++) {
      if (present && present[Math.floor(i / per)] === 0) continue;
      if (!(Number.isSafeInteger(data[i]) && data[i] >= min && data[i] <= max))
        fail(name, `value ${i}: ${data[i]} is not an integer in [${min}, ${max === Number.MAX_SAFE_INTEGER ? 'max' : max}]`);
    }
  };

  const R = f64.get(STEP_COLUMNS.step)?.shape[0] ?? 0;
  const cols = Object.fromEntries(
    (Object.entries(STEP_COLUMNS) as Array<[keyof typeof STEP_COLUMNS, string]>).map(([field, name]) => [field, get(name, [R])]),
  ) as Record<keyof typeof STEP_COLUMNS, Float64Array>;
  integers(STEP_COLUMNS.step, cols.step, Number.MIN_SAFE_INTEGER);

  const nsaNames = [
    NSA_PRESENT,
    NSA_COLUMNS.gateMean,
    NSA_COLUMNS.histogram,
    NSA_COLUMNS.invalid,
    NSA_LAYER_COLUMNS.gateMean,
    NSA_LAYER_COLUMNS.invalid,
  ];
  const nsaFound = nsaNames.filter((n) => f64.has(n));
  let nsa: ((i: number) => NsaStepStats | undefined) | null = null;
  if (nsaFound.length) {
    const missing = nsaNames.find((n) => !f64.has(n))!;
    if (missing) fail(missing, `history column missing (an NSA history has all of ${nsaNames.join(', ')})`);
    const present = get(NSA_PRESENT, [R]);
    integers(NSA_PRESENT, present, 0, 1);
    const gate = get(NSA_COLUMNS.gateMean, [R, 3]);
    const H = f64.get(NSA_COLUMNS.histogram)!.shape[1] ?? 0;
    const hist = get(NSA_COLUMNS.histogram, [R, H]);
    const invalid = get(NSA_COLUMNS.invalid, [R]);
    integers(NSA_COLUMNS.invalid, invalid, 0, undefined, present);
    const L = f64.get(NSA_LAYER_COLUMNS.invalid)!.shape[1] ?? 0;
    const layerGate = get(NSA_LAYER_COLUMNS.gateMean, [R, L, 3]);
    const layerInvalid = get(NSA_LAYER_COLUMNS.invalid, [R, L]);
    integers(NSA_LAYER_COLUMNS.invalid, layerInvalid, 0, undefined, present, L);
    const triple = (a: Float64Array, k: number): [number, number, number] => [a[3 * k], a[3 * k + 1], a[3 * k + 2]];
    const keys = f64.has(NSA_COLUMNS.keysPerQuery) ? get(NSA_COLUMNS.keysPerQuery, [R, 3]) : null;
    nsa = (i) =>
      present[i] === 1
        ? {
            gateMean: triple(gate, i),
            histogram: Array.from(hist.subarray(H * i, H * (i + 1))),
            invalid: invalid[i],
            ...(keys && { keysPerQuery: triple(keys, i) }),
            perLayer: Array.from({ length: L }, (_, j) => ({ gateMean: triple(layerGate, L * i + j), invalid: layerInvalid[L * i + j] })),
          }
        : undefined;
  }
  let indexLoss: ((i: number) => number | undefined) | null = null;
  if (f64.has(INDEX_LOSS) || f64.has(HAS_INDEX_LOSS)) {
    const value = get(INDEX_LOSS, [R]);
    const has = get(HAS_INDEX_LOSS, [R]);
    integers(HAS_INDEX_LOSS, has, 0, 1);
    indexLoss = (i) => (has[i] === 1 ? value[i] : undefined);
  }
  const metrics: StepMetrics[] = new Array<StepMetrics>(R);
  for (let i = 0; i < R; i++) {
    const m: StepMetrics = {
      step: cols.step[i],
      loss: cols.loss[i],
      lr: cols.lr[i],
      gradNorm: cols.gradNorm[i],
      tokensPerSecond: cols.tokensPerSecond[i],
      stepMs: cols.stepMs[i],
      elapsedMs: cols.elapsedMs[i],
    };
    const s = nsa?.(i);
    if (s) m.nsa = s;
    const li = indexLoss?.(i);
    if (li !== undefined) m.indexLoss = li;
    metrics[i] = m;
  }

  const E = f64.get(EVAL_COLUMNS.step)?.shape[0] ?? 0;
  const step = get(EVAL_COLUMNS.step, [E]);
  integers(EVAL_COLUMNS.step, step, Number.MIN_SAFE_INTEGER);
  const valLoss = get(EVAL_COLUMNS.valLoss, [E]);
  const accuracy = get(EVAL_COLUMNS.accuracy, [E]);
  const hasAccuracy = get(EVAL_HAS_ACCURACY, [E]);
  integers(EVAL_HAS_ACCURACY, hasAccuracy, 0, 1);
  const A = f64.get(EVAL_COLUMNS.accuracyByAnswer)?.shape[1] ?? 0;
  const byAnswer = f64.has(EVAL_COLUMNS.accuracyByAnswer) ? get(EVAL_COLUMNS.accuracyByAnswer, [E, -1]) : null;
  if (byAnswer && A < 1) fail(EVAL_COLUMNS.accuracyByAnswer, 'expected at least one answer per evaluation, found 0');
  const D = f64.get(EVAL_COLUMNS.keysByDepth)?.shape[1] ?? 0;
  const byDepth = f64.has(EVAL_COLUMNS.keysByDepth) ? get(EVAL_COLUMNS.keysByDepth, [E, -1, 4]) : null;
  if (byDepth) {
    if (D < 1) fail(EVAL_COLUMNS.keysByDepth, 'expected at least one range of needle positions per evaluation, found 0');
    integers(EVAL_COLUMNS.keysByDepth, byDepth, 0);
    for (let r = 0; r < E * D; r++) {
      const [from, to, keys, right] = byDepth.subarray(4 * r, 4 * r + 4);
      if (!(from <= to && right <= keys))
        fail(EVAL_COLUMNS.keysByDepth, `range ${r}: expected from ≤ to and keys right ≤ keys, found [${from}, ${to}], ${right} of ${keys}`);
    }
  }
  const needle = f64.has(EVAL_COLUMNS.needleSelected) ? get(EVAL_COLUMNS.needleSelected, [E]) : null;
  needle?.forEach((v, i) => {
    if (!(v >= 0 && v <= 1)) fail(EVAL_COLUMNS.needleSelected, `row ${i}: expected a share in [0, 1], found ${v}`);
  });
  const evals: EvalMetrics[] = Array.from({ length: E }, (_, i) => ({
    step: step[i],
    valLoss: valLoss[i],
    ...(hasAccuracy[i] === 1 && { accuracy: accuracy[i] }),
    ...(byAnswer && { accuracyByAnswer: Array.from(byAnswer.subarray(A * i, A * (i + 1))) }),
    ...(byDepth && {
      keysByDepth: Array.from({ length: D }, (_, j) => {
        const [from, to, sequences, keysRight] = byDepth.subarray(4 * (D * i + j), 4 * (D * i + j) + 4);
        return { from, to, sequences, keysRight };
      }),
    }),
    ...(needle && { needleSelected: needle[i] }),
  }));
  for (const name of f64.keys()) if (!used.has(name)) fail(name, 'unexpected history column');
  return { metrics, evals };
}
