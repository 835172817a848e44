// The comparison view's curves: several runs overlaid on one chart each (training loss, validation
// loss, tokens/s, gate means, a task's answer accuracy), one colour per run, one smoothing weight for all (TensorBoard's
// debiased EMA on the per-step curves; validation losses are sparse and drawn raw). Pure: runs in,
// decimated series out.
import type { EvalMetrics, StepMetrics } from '../../train/types';
import { MAX_CHART_POINTS, MinMaxBuckets } from '../charts/decimate';
import type { LineSpec } from '../charts/MetricChart';
import { DebiasedEma } from '../charts/smoothing';

export interface ComparedCurves {
  id: string;
  name: string;
  metrics: readonly StepMetrics[];
  evals: readonly EvalMetrics[];
}

/** Distinct colours (Tableau 10), one per run in pick order; more runs than colours reuse them. */
export const RUN_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#bab0ac'];

/** Gate branches: each drawn in its run's colour, told apart by the dash pattern. */
export const GATE_BRANCHES = [
  { index: 0, label: 'cmp', dash: undefined },
  { index: 1, label: 'sel', dash: '6 3' },
  { index: 2, label: 'win', dash: '2 2' },
] as const;

export interface CompareLines {
  loss: LineSpec[];
  val: LineSpec[];
  tokens: LineSpec[];
  gates: LineSpec[];
  /** Task runs' answer accuracy per evaluation (drawn raw, like the validation loss). */
  accuracy: LineSpec[];
}

export function runColor(i: number): string {
  return RUN_COLORS[i % RUN_COLORS.length];
}

function series(points: Iterable<{ x: number; y: number }>, maxPoints: number): MinMaxBuckets {
  const s = new MinMaxBuckets(maxPoints);
  for (const p of points) s.push(p);
  return s;
}

function* smoothed(metrics: readonly StepMetrics[], value: (m: StepMetrics) => number | undefined, weight: number) {
  const ema = new DebiasedEma(weight);
  for (const m of metrics) {
    const y = value(m);
    if (y !== undefined) yield { x: m.step, y: ema.push(y) };
  }
}

/** The four charts' lines for `runs` (in order), smoothed with `smoothing` ∈ [0, 1). Runs without gates (dense) have no gate lines. */
export function compareLines(runs: readonly ComparedCurves[], smoothing: number, maxPoints: number = MAX_CHART_POINTS): CompareLines {
  const out: CompareLines = { loss: [], val: [], tokens: [], gates: [], accuracy: [] };
  runs.forEach((r, i) => {
    const color = runColor(i);
    const line = (chart: string, s: MinMaxBuckets, extra: Partial<LineSpec> = {}): LineSpec => ({
      id: `${chart}-${i}`,
      name: r.name,
      series: s,
      color,
      ...extra,
    });
    out.loss.push(
      line(
        'loss',
        series(
          smoothed(r.metrics, (m) => m.loss, smoothing),
          maxPoints,
        ),
      ),
    );
    out.val.push(
      line(
        'val',
        series(
          r.evals.map((e) => ({ x: e.step, y: e.valLoss })),
          maxPoints,
        ),
        { dots: true },
      ),
    );
    out.tokens.push(
      line(
        'tokens',
        series(
          smoothed(r.metrics, (m) => m.tokensPerSecond, smoothing),
          maxPoints,
        ),
      ),
    );
    if (r.evals.some((e) => e.accuracy !== undefined))
      out.accuracy.push(
        line(
          'accuracy',
          series(
            r.evals.flatMap((e) => (e.accuracy === undefined ? [] : [{ x: e.step, y: e.accuracy }])),
            maxPoints,
          ),
          { dots: true },
        ),
      );
    if (r.metrics.some((m) => m.nsa))
      for (const b of GATE_BRANCHES)
        out.gates.push({
          ...line(
            `gate-${b.label}`,
            series(
              smoothed(r.metrics, (m) => m.nsa?.gateMean[b.index], smoothing),
              maxPoints,
            ),
            { dash: b.dash },
          ),
          name: `${r.name} · ${b.label}`,
        });
  });
  return out;
}
