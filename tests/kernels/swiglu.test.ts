import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { swigluBackwardDispatch, swigluForwardDispatch } from '../../src/kernels/swiglu';
import { swigluBackwardRef, swigluForwardRef } from '../../src/reference/swiglu';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

describe('swiglu reference', () => {
  it('backward equals central finite differences of Σ dout ⊙ out (float64, rel ≤ 1e-8)', () => {
    const r = rng(6);
    const n = 40;
    const a = randn(n, r, 3); // spans the saturated tails too
    const b = randn(n, r);
    const dout = randn(n, r);
    const loss = (aa: Float64Array, bb: Float64Array) => swigluForwardRef(aa, bb).reduce((s, v, i) => s + v * dout[i], 0);
    const h = 1e-5;
    const fd = (v: Float64Array, f: (p: Float64Array) => number) =>
      v.map((_, i) => {
        const p = v.slice();
        const m = v.slice();
        p[i] += h;
        m[i] -= h;
        return (f(p) - f(m)) / (2 * h);
      });
    const { da, db } = swigluBackwardRef(dout, a, b);
    expectClose(
      'da',
      da,
      fd(a, (p) => loss(p, b)),
      1e-8,
    );
    expectClose(
      'db',
      db,
      fd(b, (p) => loss(a, p)),
      1e-8,
    );
  });
});

describe('swiglu kernels', () => {
  it.each([1, 7, 256, 1000, 70_001])('n=%i: forward and backward rel RMS ≤ 1e-6 (exp in σ: a few ulp)', async (n) => {
    const gpu = await getGpu();
    const r = rng(n);
    const a = new Float32Array(randn(n, r, 3));
    if (n >= 7) a.set([-100, -30, 0, 30, 100], 1); // saturated σ: no inf/NaN
    const b = new Float32Array(randn(n, r));
    const dout = new Float32Array(randn(n, r));
    const arena = createArena(
      gpu,
      'swiglu',
      ['a', 'b', 'out', 'dout', 'da', 'db'].map((name) => ({ name, bytes: n * 4 })),
    );
    const s = (k: string) => arena.get(k);
    gpu.write(s('a'), a);
    gpu.write(s('b'), b);
    gpu.write(s('dout'), dout);
    gpu.write(s('da'), new Float32Array(n).fill(7)); // overwritten, not accumulated
    gpu.run([
      await swigluForwardDispatch(gpu, { a: s('a'), b: s('b'), out: s('out'), n }),
      await swigluBackwardDispatch(gpu, { dout: s('dout'), a: s('a'), b: s('b'), da: s('da'), db: s('db'), n }),
    ]);
    expectClose('out', await gpu.readF32(s('out'), n), swigluForwardRef(a, b), 1e-6);
    const g = swigluBackwardRef(dout, a, b);
    expectClose('da', await gpu.readF32(s('da'), n), g.da, 1e-6);
    expectClose('db', await gpu.readF32(s('db'), n), g.db, 1e-6);
  });

  it('backward is bit-identical across runs', async () => {
    const gpu = await getGpu();
    const n = 999;
    const r = rng(11);
    const arena = createArena(
      gpu,
      'swiglu.det',
      ['a', 'b', 'dout', 'da', 'db'].map((name) => ({ name, bytes: n * 4 })),
    );
    const s = (k: string) => arena.get(k);
    for (const k of ['a', 'b', 'dout']) gpu.write(s(k), new Float32Array(randn(n, r, 2)));
    const bwd = await swigluBackwardDispatch(gpu, { dout: s('dout'), a: s('a'), b: s('b'), da: s('da'), db: s('db'), n });
    const runs: Uint32Array[] = [];
    for (let k = 0; k < 2; k++) {
      gpu.write(s('da'), new Float32Array(n));
      gpu.write(s('db'), new Float32Array(n));
      gpu.run([bwd]);
      runs.push(new Uint32Array([...new Uint32Array(await gpu.read(s('da'))), ...new Uint32Array(await gpu.read(s('db')))]));
    }
    expect(runs[0].some((v) => v !== 0)).toBe(true);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('rejects bad arguments, naming the field', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, bytes: 64 })),
    );
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((k) => arena.get(k));
    await expect(swigluForwardDispatch(gpu, { a, b, out: c, n: 0 })).rejects.toThrow(/n must be/);
    await expect(swigluForwardDispatch(gpu, { a, b, out: c, n: 17 })).rejects.toThrow(/a holds/);
    await expect(swigluForwardDispatch(gpu, { a, b, out: a, n: 16 })).rejects.toThrow(/a and out overlap/);
    await expect(swigluBackwardDispatch(gpu, { dout: c, a, b, da: d, db: d, n: 16 })).rejects.toThrow(/da and db overlap/);
    await expect(swigluBackwardDispatch(gpu, { dout: c, a, b, da: d, db: e, n: 16 })).resolves.toBeDefined();
  });
});
