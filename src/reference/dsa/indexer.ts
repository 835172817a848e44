// Float64 lightning indexer (docs/dsa-spec.md sections 2 and 5): the index scores
// I[t, s] = c · Σ_j w[t, j] · ReLU(qI[t, j] · kI[s]) for s ≤ t, and their backward from dI given
// by slot, gathered per query row (dqI, dwI) and per key row (dkI) as the kernels do.
import { indexScale } from '../../definitions/dsa-config';
import { dot } from '../nsa/attention';

/** qI [T, H_I, d_I], kI [T, d_I], wI [T, H_I]. */
export interface IndexerDims {
  T: number;
  indexHeads: number;
  indexDim: number;
}

/** Which token each slot m < width of query t holds (−1: none). Slots of a row ascend by token. */
export interface IndexSlots {
  width: number;
  token(t: number, m: number): number;
}

/** Warm-up: U(t) = [0, t], slot m is token m (width T). */
export function denseSlots(T: number): IndexSlots {
  return { width: T, token: (t, m) => (m <= t ? m : -1) };
}

/** Sparse phase: slot m of t is sel[t, 0, m] (sel [T, G, k], every group's row equal). */
export function selectedSlots(sel: ArrayLike<number>, G: number, k: number): IndexSlots {
  return { width: k, token: (t, m) => sel[(t * G + 0) * k + m] };
}

/** I [T, T]: row t holds the scores of s ≤ t; entries s > t are 0. Heads summed ascending. */
export function indexScoresRef(qI: ArrayLike<number>, kI: ArrayLike<number>, wI: ArrayLike<number>, d: IndexerDims): Float64Array {
  const { T, indexHeads: HI, indexDim: dI } = d;
  const c = indexScale(d);
  const I = new Float64Array(T * T);
  for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) I[t * T + s] = indexScore(qI, t * HI * dI, wI, t * HI, kI, s * dI, HI, dI, c);
  return I;
}

/**
 * One score: c · Σ_j w[wOff + j] · ReLU(qI row j at qOff · kI row at kOff), heads ascending. The
 * prefill and the decoder both call it, so their scores have the same bits.
 */
export function indexScore(
  qI: ArrayLike<number>,
  qOff: number,
  wI: ArrayLike<number>,
  wOff: number,
  kI: ArrayLike<number>,
  kOff: number,
  HI: number,
  dI: number,
  c: number,
): number {
  let acc = 0;
  for (let j = 0; j < HI; j++) acc += wI[wOff + j] * Math.max(0, dot(qI, qOff + j * dI, kI, kOff, dI));
  return c * acc;
}

export interface IndexerGrads {
  dqI: Float64Array;
  dkI: Float64Array;
  dwI: Float64Array;
}

/** Backward of indexScoresRef from dI [T, width] by slot; the ReLU's derivative is 1[a > 0]. */
export function indexerBackwardRef(
  qI: ArrayLike<number>,
  kI: ArrayLike<number>,
  wI: ArrayLike<number>,
  dI: ArrayLike<number>,
  slots: IndexSlots,
  d: IndexerDims,
): IndexerGrads {
  const { T, indexHeads: HI, indexDim: dI_ } = d;
  const W = slots.width;
  const c = indexScale(d);
  const dqI = new Float64Array(T * HI * dI_);
  const dwI = new Float64Array(T * HI);
  const dkI = new Float64Array(T * dI_);
  // Per query row, over its slots ascending.
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < HI; j++) {
      const qo = (t * HI + j) * dI_;
      for (let m = 0; m < W; m++) {
        const s = slots.token(t, m);
        if (s < 0) continue;
        const g = dI[t * W + m];
        const a = dot(qI, qo, kI, s * dI_, dI_);
        if (a <= 0) continue;
        dwI[t * HI + j] += c * g * a;
        for (let e = 0; e < dI_; e++) dqI[qo + e] += c * g * wI[t * HI + j] * kI[s * dI_ + e];
      }
    }
  }
  // Per key row, over the queries t ≥ s whose slots hold s, ascending t.
  for (let s = 0; s < T; s++) {
    for (let t = s; t < T; t++) {
      for (let m = 0; m < W; m++) {
        if (slots.token(t, m) !== s) continue;
        const g = dI[t * W + m];
        for (let j = 0; j < HI; j++) {
          const qo = (t * HI + j) * dI_;
          if (dot(qI, qo, kI, s * dI_, dI_) <= 0) continue;
          for (let e = 0; e < dI_; e++) dkI[s * dI_ + e] += c * g * wI[t * HI + j] * qI[qo + e];
        }
      }
    }
  }
  return { dqI, dkI, dwI };
}
