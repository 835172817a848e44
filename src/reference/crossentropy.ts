// Float64 twin of shaders/crossentropy.wgsl. dlogits are unscaled: softmax - onehot (the kernel
// multiplies by gradScale). A target of IGNORE_TARGET (-1) gives loss 0 and a zero gradient row (a
// position the loss does not count). Any other target outside [0, V) gives a NaN loss and NaN gradient row, as on
// the GPU; so does a NaN or +Inf logit (here by plain IEEE arithmetic: max → NaN or Inf − Inf).
import { IGNORE_TARGET } from '../definitions/targets';

export function crossEntropyRef(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
): { losses: Float64Array; dlogits: Float64Array } {
  const losses = new Float64Array(N);
  const dlogits = new Float64Array(N * V);
  for (let n = 0; n < N; n++) {
    const base = n * V;
    const t = targets[n];
    if (t === IGNORE_TARGET) continue; // loss 0, gradient row 0 (already zero-filled)
    if (!(Number.isInteger(t) && t >= 0 && t < V)) {
      losses[n] = NaN;
      dlogits.fill(NaN, base, base + V);
      continue;
    }
    let m = -Infinity;
    for (let j = 0; j < V; j++) m = Math.max(m, logits[base + j]);
    let s = 0;
    for (let j = 0; j < V; j++) s += Math.exp(logits[base + j] - m);
    losses[n] = m + Math.log(s) - logits[base + t];
    for (let j = 0; j < V; j++) dlogits[base + j] = Math.exp(logits[base + j] - m) / s - (j === t ? 1 : 0);
  }
  return { losses, dlogits };
}
