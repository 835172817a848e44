// Chart series from the run's metrics, kept incrementally: the store appends metrics (a new array
// whose prefix is the old one), so each update decimates and smooths only the new steps. A series
// that is not an extension of the last one seen (a new run, a reset) is rebuilt from scratch, and
// so is the smoothed loss when the smoothing weight changes.
import type { EvalMetrics, StepMetrics } from '../../train/types';
import type { XAxisKind } from './chart-settings';
import { MAX_CHART_POINTS, MinMaxBuckets } from './decimate';
import { DebiasedEma } from './smoothing';

type RawSeries =
  'lossRaw' | 'tokensPerSecond' | 'lr' | 'gradNorm' | 'gateCmp' | 'gateSel' | 'gateWin' | 'keysCmp' | 'keysSel' | 'keysWin' | 'keysTotal';
type SmoothSeries = 'lossSmooth' | 'tokensSmooth' | 'gradSmooth' | 'gateCmpSmooth' | 'gateSelSmooth' | 'gateWinSmooth';
/** The accuracy of each sequence's j-th answer (a passkey's digit j), for the first MAX_ANSWER_LINES answers. */
const ANSWER_IDS = ['answer0', 'answer1', 'answer2', 'answer3', 'answer4', 'answer5', 'answer6', 'answer7'] as const;
type AnswerSeries = (typeof ANSWER_IDS)[number];
export const MAX_ANSWER_LINES = ANSWER_IDS.length;
/** The series of answer j (0-based, < MAX_ANSWER_LINES). */
export const answerSeries = (j: number): AnswerSeries => ANSWER_IDS[j];
export type SeriesId = RawSeries | SmoothSeries | 'val' | 'accuracy' | 'needle' | AnswerSeries;

/** The smoothed series and the raw one each follows (the learning rate is a schedule: never smoothed). */
const SMOOTHED: Record<SmoothSeries, RawSeries> = {
  lossSmooth: 'lossRaw',
  tokensSmooth: 'tokensPerSecond',
  gradSmooth: 'gradNorm',
  gateCmpSmooth: 'gateCmp',
  gateSelSmooth: 'gateSel',
  gateWinSmooth: 'gateWin',
};
const SMOOTH_IDS = Object.keys(SMOOTHED) as SmoothSeries[];

const STEP_VALUES: Record<RawSeries, (m: StepMetrics) => number | undefined> = {
  lossRaw: (m) => m.loss,
  tokensPerSecond: (m) => m.tokensPerSecond,
  lr: (m) => m.lr,
  gradNorm: (m) => m.gradNorm,
  // Dense models have no gates: those series stay empty.
  gateCmp: (m) => m.nsa?.gateMean[0],
  gateSel: (m) => m.nsa?.gateMean[1],
  gateWin: (m) => m.nsa?.gateMean[2],
  // NSA's key rows per query and group, as the forward kernels counted them (not smoothed: a count).
  keysCmp: (m) => m.nsa?.keysPerQuery?.[0],
  keysSel: (m) => m.nsa?.keysPerQuery?.[1],
  keysWin: (m) => m.nsa?.keysPerQuery?.[2],
  keysTotal: (m) => {
    const k = m.nsa?.keysPerQuery;
    return k && k[0] + k[1] + k[2];
  },
};

const STEP_IDS = Object.keys(STEP_VALUES) as Array<keyof typeof STEP_VALUES>;

/** True when `next` is `prev` with items appended (the store's updates). */
function extends_<T>(prev: readonly T[], next: readonly T[]): boolean {
  return next.length >= prev.length && (prev.length === 0 || next[prev.length - 1] === prev[prev.length - 1]);
}

export class ChartSeries {
  /** Bumped by every change: the charts' memo key (the series themselves are mutated in place). */
  revision = 0;
  private readonly series: Record<SeriesId, MinMaxBuckets>;
  private metrics: readonly StepMetrics[] = [];
  private evals: readonly EvalMetrics[] = [];
  private ema: Record<SmoothSeries, DebiasedEma>;
  private weight: number;

  /** Wall-clock seconds of each step (x = 'time'), for the evaluations that follow them. */
  private readonly secondsAt = new Map<number, number>();

  constructor(
    smoothing: number,
    readonly maxPoints: number = MAX_CHART_POINTS,
    /** x of each point: the step, or the run's elapsed training time in seconds. */
    readonly x: XAxisKind = 'step',
  ) {
    this.weight = smoothing;
    this.ema = ChartSeries.emas(smoothing);
    const ids: SeriesId[] = [...STEP_IDS, ...SMOOTH_IDS, 'val', 'accuracy', 'needle', ...ANSWER_IDS];
    this.series = Object.fromEntries(ids.map((id) => [id, new MinMaxBuckets(maxPoints)])) as Record<SeriesId, MinMaxBuckets>;
  }

  private static emas(weight: number): Record<SmoothSeries, DebiasedEma> {
    return Object.fromEntries(SMOOTH_IDS.map((id) => [id, new DebiasedEma(weight)])) as Record<SmoothSeries, DebiasedEma>;
  }

  /** A series (decimated to `maxPoints`; narrower views with `.points(n)`). */
  get(id: SeriesId): MinMaxBuckets {
    return this.series[id];
  }

  /** Brings the series up to `metrics` and `evals` with `smoothing`; idempotent for the same inputs. */
  sync(metrics: readonly StepMetrics[], evals: readonly EvalMetrics[], smoothing: number): void {
    let changed = false;
    if (!extends_(this.metrics, metrics)) {
      for (const id of [...STEP_IDS, ...SMOOTH_IDS]) this.get(id).clear();
      this.secondsAt.clear();
      this.weight = smoothing;
      this.ema = ChartSeries.emas(smoothing);
      this.metrics = [];
      changed = true;
    } else if (smoothing !== this.weight) {
      this.resmooth(smoothing);
      changed = true;
    }
    for (let i = this.metrics.length; i < metrics.length; i++) this.appendStep(metrics[i]);
    changed ||= metrics.length !== this.metrics.length;
    this.metrics = metrics;

    const val = this.get('val');
    const accuracy = this.get('accuracy');
    const needle = this.get('needle');
    if (!extends_(this.evals, evals)) {
      val.clear();
      accuracy.clear();
      needle.clear();
      for (const id of ANSWER_IDS) this.get(id).clear();
      this.evals = [];
      changed = true;
    }
    // Both describe weights after x updates: train loss of step x is computed before update x,
    // an evaluation after n steps (e.step = n) uses the weights after n updates.
    for (let i = this.evals.length; i < evals.length; i++) {
      // Evaluation n follows step n − 1 (its time axis position is that step's end).
      const x = this.x === 'step' ? evals[i].step : this.secondsAt.get(evals[i].step - 1);
      if (x === undefined) continue;
      val.push({ x, y: evals[i].valLoss });
      const a = evals[i].accuracy;
      if (a !== undefined) accuracy.push({ x, y: a });
      // The share of answers whose source a layer's selection read (NSA, MoBA, DSA): routing beside accuracy.
      const n = evals[i].needleSelected;
      if (n !== undefined) needle.push({ x, y: n });
      evals[i].accuracyByAnswer?.slice(0, MAX_ANSWER_LINES).forEach((y, j) => this.get(ANSWER_IDS[j]).push({ x, y }));
    }
    changed ||= evals.length !== this.evals.length;
    this.evals = evals;
    if (changed) this.revision++;
  }

  private xOf(m: StepMetrics): number {
    return this.x === 'step' ? m.step : m.elapsedMs / 1000;
  }

  private appendStep(m: StepMetrics): void {
    const x = this.xOf(m);
    this.secondsAt.set(m.step, m.elapsedMs / 1000);
    for (const id of STEP_IDS) {
      const y = STEP_VALUES[id](m);
      if (y !== undefined) this.get(id).push({ x, y });
    }
    for (const id of SMOOTH_IDS) {
      const y = STEP_VALUES[SMOOTHED[id]](m);
      if (y !== undefined) this.get(id).push({ x, y: this.ema[id].push(y) });
    }
  }

  private resmooth(weight: number): void {
    this.weight = weight;
    this.ema = ChartSeries.emas(weight);
    for (const id of SMOOTH_IDS) this.get(id).clear();
    for (const m of this.metrics)
      for (const id of SMOOTH_IDS) {
        const y = STEP_VALUES[SMOOTHED[id]](m);
        if (y !== undefined) this.get(id).push({ x: this.xOf(m), y: this.ema[id].push(y) });
      }
  }
}
