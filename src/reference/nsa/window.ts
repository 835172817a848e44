// Sliding-window branch: query t attends over s ∈ [max(0, t − w + 1), t] (K_win, V_win).
import type { NsaConfig, NsaShape } from '../../definitions/nsa-config';
import {
  type AttentionForward,
  type AttentionGrads,
  type KeyPattern,
  range,
  sparseAttentionBackward,
  sparseAttentionForward,
} from './attention';

export function windowPattern(T: number, c: NsaConfig): KeyPattern {
  return {
    keys: (t) => range(Math.max(0, t - c.w + 1), t + 1),
    queries: (s) => range(s, Math.min(T, s + c.w)),
  };
}

export function windowForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): AttentionForward {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionForward(q, k, v, { T, S: T, H, G, dk, dv }, windowPattern(T, c));
}

export function windowBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): AttentionGrads {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionBackward(q, k, v, fwd, dO, { T, S: T, H, G, dk, dv }, windowPattern(T, c));
}
