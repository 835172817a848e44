// Float64 twin of shaders/adamw.wgsl, written as the textbook formula (in place on p, m, v).
import type { AdamwHyper } from '../definitions/optimizer';

export function adamwRef(
  p: Float64Array,
  g: ArrayLike<number>,
  m: Float64Array,
  v: Float64Array,
  h: AdamwHyper,
  decay: boolean,
  clipScale: number,
): void {
  const { lr, beta1: b1, beta2: b2, eps, weightDecay: wd, step: t } = h;
  for (let i = 0; i < p.length; i++) {
    const gi = g[i] * clipScale;
    if (decay) p[i] *= 1 - lr * wd;
    m[i] = b1 * m[i] + (1 - b1) * gi;
    v[i] = b2 * v[i] + (1 - b2) * gi * gi;
    const mHat = m[i] / (1 - b1 ** t);
    const vHat = v[i] / (1 - b2 ** t);
    p[i] -= (lr * mHat) / (Math.sqrt(vHat) + eps);
  }
}
