// TensorBoard's scalar smoothing: an exponential moving average debiased by 1 − w^n (so the first
// points are not pulled towards 0). Non-finite values pass through and do not enter the average.
// Incremental (one value at a time) so a growing run is smoothed once per point, not per update.

function checkWeight(weight: number): void {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1) (got ${weight})`);
}

export class DebiasedEma {
  private last = 0;
  private n = 0;

  /** weight in [0, 1): 0 = no smoothing. */
  constructor(readonly weight: number) {
    checkWeight(weight);
  }

  /** The smoothed value after `v`. */
  push(v: number): number {
    if (!Number.isFinite(v)) return v;
    this.last = this.last * this.weight + (1 - this.weight) * v;
    this.n++;
    return this.weight === 0 ? v : this.last / (1 - this.weight ** this.n);
  }
}

/** The smoothed series of `values` (weight in [0, 1)). */
export function debiasedEma(values: readonly number[], weight: number): number[] {
  const ema = new DebiasedEma(weight);
  return values.map((v) => ema.push(v));
}
