// Compressed branch: query t attends over the compressed keys Kc/Vc [Ncmp,G,·] of the blocks it
// may see, k < ncmp(t). A query that sees none outputs exactly 0 (lse −Infinity, p all 0).
import { numCmpBlocks, visibleCmpBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../definitions/nsa-config';
import {
  type AttentionForward,
  type AttentionGrads,
  type KeyPattern,
  range,
  sparseAttentionBackward,
  sparseAttentionForward,
} from './attention';

export function compressedPattern(T: number, c: NsaConfig): KeyPattern {
  return {
    keys: (t) => range(0, visibleCmpBlocks(t, c)),
    // ncmp(t) > k ⟺ t ≥ k·d + l − 1.
    queries: (k) => range(k * c.d + c.l - 1, T),
  };
}

export interface CompressedForward extends AttentionForward {
  /** p_cmp [T,H,Ncmp]; 0 for k ≥ ncmp(t). */
  p: Float64Array;
}

export function compressedForwardRef(
  q: ArrayLike<number>,
  kc: ArrayLike<number>,
  vc: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): CompressedForward {
  const { T, H, G, dk, dv } = shape;
  const N = numCmpBlocks(T, c);
  const p = new Float64Array(T * H * N);
  const fwd = sparseAttentionForward(q, kc, vc, { T, S: N, H, G, dk, dv }, compressedPattern(T, c), (t, i, keys, pr) => {
    for (let j = 0; j < keys.length; j++) p[(t * H + i) * N + keys[j]] = pr[j];
  });
  return { ...fwd, p };
}

/** Gradients dq [T,H,dk], dK = dKc [Ncmp,G,dk], dV = dVc [Ncmp,G,dv]. */
export function compressedBackwardRef(
  q: ArrayLike<number>,
  kc: ArrayLike<number>,
  vc: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): AttentionGrads {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionBackward(q, kc, vc, fwd, dO, { T, S: numCmpBlocks(T, c), H, G, dk, dv }, compressedPattern(T, c));
}
