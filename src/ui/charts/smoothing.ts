// TensorBoard's scalar smoothing: an exponential moving average debiased by 1 − w^n (so the first
// points are not pulled towards 0). Non-finite values pass through and do not enter the average.

/** weight in [0, 1): 0 = no smoothing. */
export function debiasedEma(values: readonly number[], weight: number): number[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1) (got ${weight})`);
  const out = new Array<number>(values.length);
  let last = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) {
      out[i] = v;
      continue;
    }
    last = last * weight + (1 - weight) * v;
    n++;
    out[i] = weight === 0 ? v : last / (1 - weight ** n);
  }
  return out;
}
