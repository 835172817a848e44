// tests/helpers/finite-diff.ts: central differences and the gradient assertions (CPU, fast tier).
import { describe, expect, it } from 'vitest';

import { expectGradient, expectGradientPointwise, fdDerivative, fdGradient, pick, spreadIndices } from './helpers/finite-diff';

// f(x) = Σ c_i sin(x_i) + (Σ x_i)² / 2: ∂f/∂x_i = c_i cos(x_i) + Σ x.
const c = Float64Array.from([0.5, -1.5, 2, 0.25, -0.75]);
const f = (x: Float64Array) => {
  let s = 0;
  let t = 0;
  for (let i = 0; i < x.length; i++) {
    s += c[i] * Math.sin(x[i]);
    t += x[i];
  }
  return s + (t * t) / 2;
};
const grad = (x: Float64Array) => {
  const t = x.reduce((a, b) => a + b, 0);
  return x.map((v, i) => c[i] * Math.cos(v) + t);
};

describe('finite differences', () => {
  it('match an analytic gradient to ~1e-10 and leave x bit-identical', () => {
    const x = Float64Array.from([0.3, -1.1, 2.4, 0, 0.7]);
    const before = x.slice();
    const fd = fdGradient(f, x);
    expect(new Uint8Array(x.buffer)).toEqual(new Uint8Array(before.buffer));
    const g = grad(x);
    for (let i = 0; i < x.length; i++) expect(Math.abs(fd[i] - g[i])).toBeLessThan(1e-9);
  });

  it('index subsets return one value per index, in order', () => {
    const x = Float64Array.from([0.3, -1.1, 2.4, 0, 0.7]);
    const fd = fdGradient(f, x, { indices: [4, 1] });
    expect(fd).toHaveLength(2);
    expect(Math.abs(fd[0] - grad(x)[4])).toBeLessThan(1e-9);
    expect(Math.abs(fd[1] - grad(x)[1])).toBeLessThan(1e-9);
    expect(() => fdGradient(f, x, { indices: [5] })).toThrow(/out of/);
    expect(spreadIndices(5)).toEqual([0, 2, 4]);
    expect(spreadIndices(1)).toEqual([0]);
    expect(pick([10, 11, 12], [2, 0])).toEqual(Float64Array.from([12, 10]));
  });

  it('scalar derivative', () => {
    expect(Math.abs(fdDerivative(Math.exp, 1, 1e-6) - Math.E)).toBeLessThan(1e-8);
  });

  it('expectGradient passes the right gradient and fails a wrong one, a vanishing one and a bad length', () => {
    const x = Float64Array.from([0.3, -1.1, 2.4, 0, 0.7]);
    const g = grad(x);
    expect(expectGradient('g', g, f, x, { tol: 1e-8, minNorm: 1e-3 }).err).toBeLessThan(1e-8);
    expect(expectGradient('g', g, f, x, { tol: 1e-8, indices: [3] }).fd).toHaveLength(1);
    const wrong = g.slice();
    wrong[2] *= 1.01;
    expect(() => expectGradient('wrong', wrong, f, x, { tol: 1e-6 })).toThrow(/wrong: relative RMS error/);
    expect(() => expectGradient('flat', new Float64Array(5), () => 1, x, { tol: 1e-6, minNorm: 1e-3 })).toThrow(/must not vanish/);
    expect(() => expectGradient('short', g.subarray(1), f, x, { tol: 1e-6 })).toThrow(/4 elements/);
  });

  it('expectGradientPointwise bounds each element by rtol·max(1, |fd|) + atol', () => {
    const x = Float64Array.from([0.3, -1.1, 2.4, 0, 0.7]);
    const g = grad(x);
    expectGradientPointwise('g', g, f, x, { rtol: 1e-8, indices: spreadIndices(x.length) });
    const wrong = g.slice();
    wrong[4] += 1e-5;
    expect(() => expectGradientPointwise('wrong', wrong, f, x, { rtol: 1e-8 })).toThrow(/wrong\[4\]/);
    expectGradientPointwise('loose', wrong, f, x, { rtol: 1e-8, atol: 2e-5 });
  });
});
