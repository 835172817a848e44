// Float64 indexer loss (docs/dsa-spec.md section 5): per query t, the KL divergence from the main
// attention's distribution over U(t) (the heads' probabilities summed, L1-normalised; detached) to
// softmax over U(t) of the index scores, and its gradient dI by slot. U(t) is given by slots:
// [0, t] in the warm-up (denseSlots), the selection in the sparse phase (selectedSlots).
import type { DsaShape } from '../../definitions/dsa-config';
import { dot } from '../nsa/attention';
import type { IndexSlots } from './indexer';

export interface IndexerKl {
  /** KL_t per query [T] (unweighted). */
  klRows: Float64Array;
  /** [T, width]: gradScale · (r − p) on the row's slots, 0 on −1 slots. */
  dI: Float64Array;
  /** The target p [T, width] by slot (for tests and the stepper). */
  target: Float64Array;
}

/**
 * q [T,H,dk], K [T,G,dk] and lse [H,T] of the main attention (whose probabilities over U(t) are
 * exp(q·K/√dk − lse)); I [T, T] the index scores. gradScale = λ / (B·T): dI = ∂(gradScale·Σ KL_t)/∂I.
 */
export function indexerKlRef(
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  lse: ArrayLike<number>,
  I: ArrayLike<number>,
  slots: IndexSlots,
  shape: DsaShape,
  gradScale: number,
): IndexerKl {
  const { T, H, G, dk } = shape;
  const h = H / G;
  const W = slots.width;
  const scale = 1 / Math.sqrt(dk);
  const klRows = new Float64Array(T);
  const dI = new Float64Array(T * W);
  const target = new Float64Array(T * W);
  for (let t = 0; t < T; t++) {
    // Target: Σ over heads (ascending) of the main probabilities, then L1-normalised.
    let zp = 0;
    for (let m = 0; m < W; m++) {
      const s = slots.token(t, m);
      if (s < 0) continue;
      let p = 0;
      for (let i = 0; i < H; i++) {
        const g = Math.floor(i / h);
        p += Math.exp(dot(q, (t * H + i) * dk, K, (s * G + g) * dk, dk) * scale - lse[i * T + t]);
      }
      target[t * W + m] = p;
      zp += p;
    }
    // Indexer distribution: softmax over the slots (stable: the row max first).
    let mx = -Infinity;
    for (let m = 0; m < W; m++) {
      const s = slots.token(t, m);
      if (s >= 0) mx = Math.max(mx, I[t * T + s]);
    }
    let zr = 0;
    for (let m = 0; m < W; m++) {
      const s = slots.token(t, m);
      if (s >= 0) zr += Math.exp(I[t * T + s] - mx);
    }
    const lseI = mx + Math.log(zr);
    let kl = 0;
    for (let m = 0; m < W; m++) {
      const s = slots.token(t, m);
      if (s < 0) continue;
      const p = target[t * W + m] / zp;
      target[t * W + m] = p;
      const logR = I[t * T + s] - lseI;
      if (p > 0) kl += p * (Math.log(p) - logR);
      dI[t * W + m] = gradScale * (Math.exp(logR) - p);
    }
    klRows[t] = kl;
  }
  return { klRows, dI, target };
}
