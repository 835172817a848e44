// Chart series from the run's metrics: raw and smoothed training loss, validation loss, tokens/s,
// learning rate, gradient norm and the NSA gate means (full length: each chart decimates for its
// width, see MetricChart).
import type { EvalMetrics, StepMetrics } from '../../train/types';
import type { Point } from './decimate';
import { debiasedEma } from './smoothing';

export interface ChartSeries {
  lossRaw: Point[];
  lossSmooth: Point[];
  val: Point[];
  tokensPerSecond: Point[];
  lr: Point[];
  gradNorm: Point[];
  /** cmp, sel, win; empty for dense models. */
  gates: [Point[], Point[], Point[]];
}

const pts = (metrics: readonly StepMetrics[], y: (m: StepMetrics) => number): Point[] => metrics.map((m) => ({ x: m.step, y: y(m) }));

/** The loss curves (they depend on the smoothing weight). */
export function lossSeries(metrics: readonly StepMetrics[], evals: readonly EvalMetrics[], smoothing: number): Pick<ChartSeries, 'lossRaw' | 'lossSmooth' | 'val'> {
  const smooth = debiasedEma(
    metrics.map((m) => m.loss),
    smoothing,
  );
  return {
    lossRaw: pts(metrics, (m) => m.loss),
    lossSmooth: metrics.map((m, i) => ({ x: m.step, y: smooth[i] })),
    // Both describe weights after x updates: train loss of step x is computed before update x,
    // an evaluation after n steps (e.step = n) uses the weights after n updates.
    val: evals.map((e) => ({ x: e.step, y: e.valLoss })),
  };
}

/** The other curves (independent of the smoothing weight). */
export function rateSeries(metrics: readonly StepMetrics[]): Omit<ChartSeries, 'lossRaw' | 'lossSmooth' | 'val'> {
  const nsa = metrics.filter((m) => m.nsa);
  const gate = (c: 0 | 1 | 2) => nsa.map((m) => ({ x: m.step, y: m.nsa!.gateMean[c] }));
  return {
    tokensPerSecond: pts(metrics, (m) => m.tokensPerSecond),
    lr: pts(metrics, (m) => m.lr),
    gradNorm: pts(metrics, (m) => m.gradNorm),
    gates: nsa.length ? [gate(0), gate(1), gate(2)] : [[], [], []],
  };
}
