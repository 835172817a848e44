// Central finite differences in float64, and the assertions that compare them with an analytic
// gradient. One implementation for every gradient test (the references' backwards, layer and
// model gradients).
//
//   ∂f/∂x[i] ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h
//
// Error: truncation ≈ h²·|f'''|/6 plus rounding ≈ ε·|f|/h (ε = 2⁻⁵²). With h = 1e-5 (the default)
// and O(1) values both are ≈ 1e-10..1e-11, far below the tolerances the tests state (≥ 1e-9 rel).
// x is perturbed in place and each element restored to its exact bits before the next.
import { expect } from 'vitest';

import { expectClose } from './compare';

export const FD_STEP = 1e-5;

export interface FdOptions {
  /** Step h (default FD_STEP = 1e-5). */
  h?: number;
  /**
   * Differentiate only these elements of x (for large tensors); the result then has one entry
   * per index, in this order. Default: every element.
   */
  indices?: ArrayLike<number>;
}

/**
 * Central differences of the scalar f with respect to x (a Float64Array that f reads, directly or
 * as its argument). Returns ∂f/∂x at every element, or at `indices` only. x is left unchanged.
 */
export function fdGradient(f: (x: Float64Array) => number, x: Float64Array, opts: FdOptions = {}): Float64Array {
  const h = opts.h ?? FD_STEP;
  const idx = opts.indices ?? allIndices(x.length);
  const g = new Float64Array(idx.length);
  for (let n = 0; n < idx.length; n++) {
    const i = idx[n];
    if (!(i >= 0 && i < x.length && Number.isInteger(i))) throw new Error(`fdGradient: index ${i} out of [0, ${x.length})`);
    const x0 = x[i];
    x[i] = x0 + h;
    const fp = f(x);
    x[i] = x0 - h;
    const fm = f(x);
    x[i] = x0;
    g[n] = (fp - fm) / (2 * h);
  }
  return g;
}

/** Central difference of a scalar function of one variable at x. */
export function fdDerivative(f: (x: number) => number, x: number, h = FD_STEP): number {
  return (f(x + h) - f(x - h)) / (2 * h);
}

function allIndices(n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

/** A few indices spread over [0, n): the first, the middle and the last (deduplicated, ascending). */
export function spreadIndices(n: number): number[] {
  return [...new Set([0, Math.floor(n / 2), n - 1])].filter((i) => i >= 0 && i < n);
}

/** analytic[indices], or analytic itself when indices is undefined. */
export function pick(analytic: ArrayLike<number>, indices?: ArrayLike<number>): Float64Array {
  if (!indices) return Float64Array.from(analytic);
  const out = new Float64Array(indices.length);
  for (let n = 0; n < indices.length; n++) out[n] = analytic[indices[n]];
  return out;
}

export interface GradCheck extends FdOptions {
  /** Largest allowed relative RMS error ‖analytic − fd‖₂ / ‖fd‖₂ (fd is the reference). */
  tol: number;
  /**
   * When set, the finite-difference gradient must have ‖fd‖₂ above this: the check must not pass
   * because both sides vanish.
   */
  minNorm?: number;
}

export interface GradCheckResult {
  /** Relative RMS error of the analytic gradient against the finite differences. */
  err: number;
  fd: Float64Array;
}

/**
 * Asserts that `analytic` (∂f/∂x, the full gradient of x even with `indices`) matches central
 * finite differences of f within relative RMS `tol`, naming the tensor on failure.
 */
export function expectGradient(
  name: string,
  analytic: ArrayLike<number>,
  f: (x: Float64Array) => number,
  x: Float64Array,
  check: GradCheck,
): GradCheckResult {
  if (analytic.length !== x.length) throw new Error(`${name}: gradient has ${analytic.length} elements, x has ${x.length}`);
  const fd = fdGradient(f, x, check);
  if (check.minNorm !== undefined) {
    let ss = 0;
    for (let n = 0; n < fd.length; n++) ss += fd[n] * fd[n];
    const n = Math.sqrt(ss);
    expect(
      n,
      `${name}: finite-difference gradient norm ${n.toExponential(3)} should exceed ${check.minNorm} (must not vanish)`,
    ).toBeGreaterThan(check.minNorm);
  }
  const err = expectClose(name, pick(analytic, check.indices), fd, check.tol);
  return { err, fd };
}

export interface PointwiseGradCheck extends FdOptions {
  /** Per element: |fd − analytic| ≤ rtol·max(1, |fd|) + atol. */
  rtol: number;
  atol?: number;
}

/** Asserts the per-element bound |fd − analytic| ≤ rtol·max(1, |fd|) + atol at every checked index. */
export function expectGradientPointwise(
  name: string,
  analytic: ArrayLike<number>,
  f: (x: Float64Array) => number,
  x: Float64Array,
  check: PointwiseGradCheck,
): Float64Array {
  if (analytic.length !== x.length) throw new Error(`${name}: gradient has ${analytic.length} elements, x has ${x.length}`);
  const fd = fdGradient(f, x, check);
  const an = pick(analytic, check.indices);
  const atol = check.atol ?? 0;
  for (let n = 0; n < fd.length; n++) {
    const i = check.indices ? check.indices[n] : n;
    expect(Math.abs(fd[n] - an[n]), `${name}[${i}] fd ${fd[n]} vs ${an[n]}`).toBeLessThanOrEqual(
      check.rtol * Math.max(1, Math.abs(fd[n])) + atol,
    );
  }
  return fd;
}
