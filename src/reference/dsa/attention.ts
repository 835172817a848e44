// Float64 main attention of DSA (docs/dsa-spec.md section 4): query t, head i of group g attends
// over the selected tokens S(t) of sel [T, G, k]; backward gathered (dK/dV over the queries that
// selected each key), on the sparse attention the NSA branches share.
import type { DsaShape } from '../../definitions/dsa-config';
import { type AttentionForward, type AttentionGrads, sparseAttentionBackward, sparseAttentionForward } from '../nsa/attention';
import { tokenPattern } from './topk';

export function dsaAttentionForwardRef(
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  sel: ArrayLike<number>,
  shape: DsaShape,
  k: number,
): AttentionForward {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionForward(q, K, V, { T, S: T, H, G, dk, dv }, tokenPattern(sel, T, G, k));
}

export function dsaAttentionBackwardRef(
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  sel: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  shape: DsaShape,
  k: number,
): AttentionGrads {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionBackward(q, K, V, fwd, dO, { T, S: T, H, G, dk, dv }, tokenPattern(sel, T, G, k));
}
