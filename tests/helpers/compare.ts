// Numeric comparison helpers with the error measure the tests state tolerances in.
import { expect } from 'vitest';

type Num = ArrayLike<number>;

/** Relative RMS error ‖a−b‖₂ / max(‖b‖₂, tiny): b is the reference. */
export function relRms(a: Num, b: Num): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  if (!Number.isFinite(num)) return Infinity;
  return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
}

export function maxAbs(a: Num, b: Num): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return Number.isNaN(m) ? Infinity : m;
}

/** Asserts relRms(actual, expected) ≤ tol, naming the tensor on failure. */
export function expectClose(name: string, actual: Num, expected: Num, tol: number): number {
  const e = relRms(actual, expected);
  expect(e, `${name}: relative RMS error ${e.toExponential(3)} > ${tol}`).toBeLessThanOrEqual(tol);
  return e;
}

export { mulberry32 as rng } from '../../src/util/random';
import { gaussian } from '../../src/util/random';

export function randn(n: number, r: () => number, scale = 1): Float64Array {
  const g = gaussian(r);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = scale * g();
  return out;
}
