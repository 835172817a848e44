// Float64 twin of DSA's indexer inside a layer (docs/dsa-spec.md sections 5 and 6): the indexer's
// projections of the layer's normed input x (qI = RoPE(x·WqI), kI = RoPE(x·WkI), wI = x·WwI), the
// attention of a batch in either phase, the indexer loss L_I = λ/(B·T)·Σ KL_t, and L_I's gradient —
// which reaches WqI, WkI, WwI only: x is detached (no dx from the indexer) and the target is
// detached (no gradient into q, K). Sequences are independent; positions restart at 0 in each.
import { type DsaConfig, type DsaPhase, type DsaShape } from '../../definitions/dsa-config';
import { matmulRef } from '../matmul';
import type { AttentionForward } from '../nsa/attention';
import { ropeRef } from '../rope';
import { dsaAttentionForwardRef } from './attention';
import { denseSlots, indexerBackwardRef, indexScoresRef, selectedSlots } from './indexer';
import { indexerKlRef } from './kl';
import { selectTokensRef } from './topk';

/** WqI [C, H_I·d_I], WkI [C, d_I], WwI [C, H_I]. */
export interface IndexerWeights {
  wqI: ArrayLike<number>;
  wkI: ArrayLike<number>;
  wwI: ArrayLike<number>;
}

export interface IndexerGradsW {
  dwqI: Float64Array;
  dwkI: Float64Array;
  dwwI: Float64Array;
}

/** Rows: B·T of x [B·T, C]; RoPE at position r % T when ropeTheta is given (none otherwise). */
export interface IndexerRows {
  B: number;
  T: number;
  C: number;
  ropeTheta?: number;
}

export interface IndexerProjection {
  qI: Float64Array;
  kI: Float64Array;
  wI: Float64Array;
}

export function indexerProjectRef(x: ArrayLike<number>, W: IndexerWeights, r: IndexerRows, c: DsaConfig): IndexerProjection {
  const N = r.B * r.T;
  const { indexHeads: HI, indexDim: dI } = c;
  const rope = (a: Float64Array, heads: number) => (r.ropeTheta === undefined ? a : ropeRef(a, N, r.T, heads, dI, r.ropeTheta, false));
  return {
    qI: rope(matmulRef(x, W.wqI, N, HI * dI, r.C), HI),
    kI: rope(matmulRef(x, W.wkI, N, dI, r.C), 1),
    wI: matmulRef(x, W.wwI, N, HI, r.C),
  };
}

/** dW = xᵀ · (the un-rotated gradient); there is no dx (the indexer's input is detached). */
export function indexerProjectBackwardRef(
  x: ArrayLike<number>,
  g: { dqI: ArrayLike<number>; dkI: ArrayLike<number>; dwI: ArrayLike<number> },
  r: IndexerRows,
  c: DsaConfig,
): IndexerGradsW {
  const N = r.B * r.T;
  const { indexHeads: HI, indexDim: dI } = c;
  const unrope = (a: ArrayLike<number>, heads: number) =>
    r.ropeTheta === undefined ? a : ropeRef(a, N, r.T, heads, dI, r.ropeTheta, true);
  return {
    dwqI: matmulRef(x, unrope(g.dqI, HI), r.C, HI * dI, N, { transA: true }),
    dwkI: matmulRef(x, unrope(g.dkI, 1), r.C, dI, N, { transA: true }),
    dwwI: matmulRef(x, g.dwI, r.C, HI, N, { transA: true }),
  };
}

export interface DsaLayerAttention {
  proj: IndexerProjection;
  /** Per sequence: index scores [T,T], selection [T,G,k], the main attention's forward. */
  seqs: { scores: Float64Array; sel: Int32Array; fwd: AttentionForward }[];
  /** [B·T, H, dv]. */
  out: Float64Array;
  /** L_I = λ/(B·T)·Σ KL_t. */
  indexLoss: number;
  /** ∂L_I/∂WqI, WkI, WwI. */
  grads: IndexerGradsW;
}

/**
 * One layer's DSA attention and indexer loss for a batch: main q [B·T,H,dk], K [B·T,G,dk],
 * V [B·T,G,dv] (after projections and RoPE), x the layer's normed input. The warm-up attends
 * densely; the sparse phase over the top-k. `selections` (per sequence) replaces the top-k (for
 * finite differences with the selection frozen).
 */
export function dsaLayerAttentionRef(
  x: ArrayLike<number>,
  W: IndexerWeights,
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  shape: DsaShape & { B: number; C: number; ropeTheta?: number },
  c: DsaConfig,
  phase: DsaPhase,
  selections?: readonly Int32Array[],
): DsaLayerAttention {
  const { B, T, H, G, dk, dv } = shape;
  const one = { T, H, G, dk, dv };
  const d = { T, indexHeads: c.indexHeads, indexDim: c.indexDim };
  const proj = indexerProjectRef(x, W, shape, c);
  const gradScale = c.lossWeight / (B * T);
  const HI = c.indexHeads;
  const dI = c.indexDim;
  const out = new Float64Array(B * T * H * dv);
  const dqI = new Float64Array(B * T * HI * dI);
  const dkI = new Float64Array(B * T * dI);
  const dwI = new Float64Array(B * T * HI);
  const seqs: DsaLayerAttention['seqs'] = [];
  let klSum = 0;
  for (let b = 0; b < B; b++) {
    const part = (a: ArrayLike<number>, n: number) => Float64Array.from({ length: T * n }, (_, i) => a[b * T * n + i]);
    const [qb, kb, vb] = [part(q, H * dk), part(K, G * dk), part(V, G * dv)];
    const [qIb, kIb, wIb] = [part(proj.qI, HI * dI), part(proj.kI, dI), part(proj.wI, HI)];
    const scores = indexScoresRef(qIb, kIb, wIb, d);
    const sel = selections?.[b] ?? selectTokensRef(scores, T, G, c.topK);
    const fwd =
      phase === 'warmup'
        ? dsaAttentionForwardRef(qb, kb, vb, selectTokensRef(scores, T, G, T), one, T)
        : dsaAttentionForwardRef(qb, kb, vb, sel, one, c.topK);
    const slots = phase === 'warmup' ? denseSlots(T) : selectedSlots(sel, G, c.topK);
    const kl = indexerKlRef(qb, kb, fwd.lse, scores, slots, one, gradScale);
    for (const v of kl.klRows) klSum += v;
    const g = indexerBackwardRef(qIb, kIb, wIb, kl.dI, slots, d);
    dqI.set(g.dqI, b * T * HI * dI);
    dkI.set(g.dkI, b * T * dI);
    dwI.set(g.dwI, b * T * HI);
    out.set(fwd.o, b * T * H * dv);
    seqs.push({ scores, sel, fwd });
  }
  return { proj, seqs, out, indexLoss: gradScale * klSum, grads: indexerProjectBackwardRef(x, { dqI, dkI, dwI }, shape, c) };
}
