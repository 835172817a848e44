// Numeric comparison helpers with the error measure the tests state tolerances in.
import { expect } from 'vitest';

type Num = ArrayLike<number>;

/**
 * Relative RMS error ‖a−b‖₂ / max(‖b‖₂, floor, tiny): b is the reference. `floor` is for a reference
 * that cancels to (near) zero, where float32 rounding of the terms that cancel is all there is to
 * measure: see attentionGradFloor.
 */
export function relRms(a: Num, b: Num, floor = 0): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  if (!Number.isFinite(num)) return Infinity;
  return Math.sqrt(num) / Math.max(Math.sqrt(den), floor, 1e-30);
}

const norm = (x: Num): number => {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  return Math.sqrt(s);
};

/**
 * A floor (for relRms) under an attention gradient: 1e-2 × the size of its terms before they
 * cancel, scale · ‖dO‖ · (RMS row norm of v) · (RMS row norm of k for dQ, of q for dK). A gradient
 * can cancel exactly: a query with one key has P = 1 and dS = P·(dO·v − dO·o) = 0 (with w = 1 every
 * query), and its float32 value is then rounding noise of dO·v − dO·o (NVIDIA's driver leaves
 * ~1e-7 of the terms; SwiftShader happened to give 0). A wrong kernel errs by the terms' own size,
 * 100 × this floor, so the check still fails it at any tolerance ≤ 1e-2.
 */
export function attentionGradFloor(scale: number, dout: Num, v: Num, vRows: number, other: Num, otherRows: number): number {
  if (vRows === 0 || otherRows === 0) return 0; // no keys: nothing to cancel
  return 1e-2 * scale * norm(dout) * (norm(v) / Math.sqrt(vRows)) * (norm(other) / Math.sqrt(otherRows));
}

export function maxAbs(a: Num, b: Num): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return Number.isNaN(m) ? Infinity : m;
}

/** Asserts relRms(actual, expected, floor) ≤ tol, naming the tensor on failure. */
export function expectClose(name: string, actual: Num, expected: Num, tol: number, floor = 0): number {
  const e = relRms(actual, expected, floor);
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
