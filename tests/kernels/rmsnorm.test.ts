import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { rmsnormBackwardDispatches, rmsnormForwardDispatch } from '../../src/kernels/rmsnorm';
import { rmsnormBackwardRef, rmsnormForwardRef } from '../../src/reference/rmsnorm';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const EPS = 1e-5;
// With C = 1 and eps ≪ x², dx = w·dout·eps·rstd³ is the ~eps/x² remainder of a cancellation
// (x̂ ∥ g): neither f32 nor a float64 finite difference resolves it. C = 1 cases use eps = 0.25,
// which keeps the case meaningful (indexing, one-element rows) and well conditioned.
const EPS_C1 = 0.25;
const epsFor = (C: number) => (C === 1 ? EPS_C1 : EPS);

describe('rmsnorm reference', () => {
  it('backward equals central finite differences of Σ dout ⊙ out in x and weight (float64, rel ≤ 1e-7)', () => {
    const r = rng(3);
    for (const [rows, C] of [
      [3, 5],
      [2, 1],
      [1, 8],
    ]) {
      const x = randn(rows * C, r);
      const weight = randn(C, r).map((v) => 1 + 0.5 * v);
      const dout = randn(rows * C, r);
      const loss = (xx: Float64Array, ww: Float64Array) =>
        rmsnormForwardRef(xx, ww, rows, C, epsFor(C)).out.reduce((s, v, i) => s + v * dout[i], 0);
      const fd = (v: Float64Array, f: (p: Float64Array) => number) => {
        const h = 1e-6;
        return v.map((_, i) => {
          const p = v.slice();
          const m = v.slice();
          p[i] += h;
          m[i] -= h;
          return (f(p) - f(m)) / (2 * h);
        });
      };
      const { rstd } = rmsnormForwardRef(x, weight, rows, C, epsFor(C));
      const { dx, dweight } = rmsnormBackwardRef(dout, x, weight, rstd, rows, C);
      expectClose(
        `dx ${rows}x${C}`,
        dx,
        fd(x, (p) => loss(p, weight)),
        1e-7,
      );
      expectClose(
        `dweight ${rows}x${C}`,
        dweight,
        fd(weight, (p) => loss(x, p)),
        1e-7,
      );
    }
  });
});

async function setup(rows: number, C: number, accumulateDx: boolean, lanes?: number) {
  const gpu = await getGpu();
  const n = rows * C;
  const arena = createArena(gpu, 'rmsnorm', [
    { name: 'x', bytes: n * 4 },
    { name: 'weight', bytes: C * 4 },
    { name: 'out', bytes: n * 4 },
    { name: 'rstd', bytes: rows * 4 },
    { name: 'dout', bytes: n * 4 },
    { name: 'dx', bytes: n * 4 },
    { name: 'dweight', bytes: C * 4 },
  ]);
  const s = (k: string) => arena.get(k);
  const fwd = await rmsnormForwardDispatch(gpu, {
    x: s('x'),
    weight: s('weight'),
    out: s('out'),
    rstd: s('rstd'),
    rows,
    C,
    eps: epsFor(C),
    lanes,
  });
  const bwd = await rmsnormBackwardDispatches(gpu, {
    dout: s('dout'),
    x: s('x'),
    weight: s('weight'),
    rstd: s('rstd'),
    dx: s('dx'),
    dweight: s('dweight'),
    rows,
    C,
    accumulateDx,
    lanes,
  });
  return { gpu, s, fwd, bwd };
}

describe('rmsnorm kernels', () => {
  // [rows, C, accumulateDx, lanes]: rows=1, C=1, C=7, C=768 with few rows, C not a multiple of the
  // 8-column dweight tile, rows not a multiple of its 32 row lanes nor of the rows per workgroup.
  // Lanes per row: the adapter's default (4 on SwiftShader), and 32 (the hardware default), 1, 256.
  const shapes: [number, number, boolean, number | undefined][] = [
    [1, 1, false, undefined],
    [1, 7, true, undefined],
    [5, 1, true, 32],
    [3, 768, false, undefined],
    [2, 768, true, 32],
    [37, 33, false, undefined],
    [37, 33, true, 32],
    [70, 300, true, undefined],
    [70, 300, false, 32],
    [9, 20, false, 1],
    [3, 600, true, 256],
  ];

  it.each(shapes)(
    'rows=%i C=%i accumulateDx=%s lanes=%s: forward rel RMS ≤ 1e-6 (row reduction + sqrt), backward ≤ 1e-5',
    async (rows, C, acc, lanes) => {
      const r = rng(rows * 7919 + C);
      const n = rows * C;
      const x = new Float32Array(randn(n, r).map((v, i) => v + (i % 3) - 1)); // rows with nonzero mean
      const weight = new Float32Array(randn(C, r).map((v) => 1 + 0.3 * v));
      const dout = new Float32Array(randn(n, r));
      const dx0 = new Float32Array(randn(n, r));
      const dw0 = new Float32Array(randn(C, r));
      const { gpu, s, fwd, bwd } = await setup(rows, C, acc, lanes);
      gpu.write(s('x'), x);
      gpu.write(s('weight'), weight);
      gpu.write(s('dout'), dout);
      gpu.write(s('dx'), dx0);
      gpu.write(s('dweight'), dw0);
      gpu.run([fwd, ...bwd]);
      const ref = rmsnormForwardRef(x, weight, rows, C, epsFor(C));
      expectClose('out', await gpu.readF32(s('out'), n), ref.out, 1e-6);
      const rstd = await gpu.readF32(s('rstd'), rows);
      expectClose('rstd', rstd, ref.rstd, 1e-6);
      // The backward is checked against the reference evaluated at the GPU's own saved rstd.
      const g = rmsnormBackwardRef(dout, x, weight, rstd, rows, C);
      expectClose('dx', await gpu.readF32(s('dx'), n), acc ? g.dx.map((v, i) => v + dx0[i]) : g.dx, 1e-5);
      expectClose(
        'dweight',
        await gpu.readF32(s('dweight'), C),
        g.dweight.map((v, i) => v + dw0[i]),
        1e-5,
      );
    },
  );

  it('backward is bit-identical across runs', async () => {
    const [rows, C] = [45, 70];
    const r = rng(9);
    const { gpu, s, fwd, bwd } = await setup(rows, C, false);
    gpu.write(s('x'), new Float32Array(randn(rows * C, r)));
    gpu.write(s('weight'), new Float32Array(randn(C, r)));
    gpu.write(s('dout'), new Float32Array(randn(rows * C, r)));
    gpu.run([fwd]);
    const runs: Uint32Array[][] = [];
    for (let k = 0; k < 2; k++) {
      gpu.write(s('dweight'), new Float32Array(C));
      gpu.run(bwd);
      runs.push([new Uint32Array(await gpu.read(s('dx'))), new Uint32Array(await gpu.read(s('dweight')))]);
    }
    expect(runs[1][0]).toEqual(runs[0][0]);
    expect(runs[1][1]).toEqual(runs[0][1]);
  });

  it('rejects bad arguments, naming the field', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['x', 'w', 'o', 'r', 'd'].map((name) => ({ name, bytes: 64 })),
    );
    const [x, w, o, r, d] = ['x', 'w', 'o', 'r', 'd'].map((k) => arena.get(k));
    const fwd = { x, weight: w, out: o, rstd: r, rows: 2, C: 8, eps: 1e-5 };
    await expect(rmsnormForwardDispatch(gpu, { ...fwd, C: 0 })).rejects.toThrow(/C must be/);
    await expect(rmsnormForwardDispatch(gpu, { ...fwd, rows: 3 })).rejects.toThrow(/x holds/);
    await expect(rmsnormForwardDispatch(gpu, { ...fwd, eps: -1 })).rejects.toThrow(/eps/);
    await expect(rmsnormForwardDispatch(gpu, { ...fwd, out: x })).rejects.toThrow(/x and out overlap/);
    await expect(rmsnormForwardDispatch(gpu, { ...fwd, lanes: 12 })).rejects.toThrow(/lanes must be/);
    const bwd = { dout: o, x, weight: w, rstd: r, dx: d, dweight: w, rows: 2, C: 8, accumulateDx: false };
    await expect(rmsnormBackwardDispatches(gpu, bwd)).rejects.toThrow(/weight and dweight overlap/);
    await expect(rmsnormBackwardDispatches(gpu, { ...bwd, dweight: r, rows: 1.5 })).rejects.toThrow(/rows must be/);
  });
});
