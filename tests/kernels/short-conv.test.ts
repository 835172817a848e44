// The key convolution (docs/nsa-spec.md 3.1): its float64 twin against hand values and central
// finite differences, causality (no output depends on a later row or another sequence), and the
// WGSL kernels (forward, input gradient, weight gradient with and without accumulate) against the
// twin on random shapes: one tap, more taps than positions, T = 1, rows spanning several sequences,
// channel counts off the workgroup size; the weight gradient bit-identical across runs.
import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { shortConvBackwardInputDispatch, shortConvBackwardWeightDispatch, shortConvForwardDispatch } from '../../src/kernels/short-conv';
import { shortConvBackwardRef, shortConvRef, type ShortConvRefShape } from '../../src/reference/short-conv';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

describe('short convolution reference', () => {
  it('sums the current and earlier tokens of the same sequence (hand values)', () => {
    // T = 3, two sequences, one channel, taps [w0, w1, w2] = [100, 10, 1] (w2: the current token).
    const s = { rows: 6, T: 3, C: 1, K: 3 };
    const y = shortConvRef([1, 2, 3, 4, 5, 6], [100, 10, 1], s);
    expect(Array.from(y)).toEqual([1, 2 + 10, 3 + 20 + 100, 4, 5 + 40, 6 + 50 + 400]);
  });

  it('gradients equal central finite differences; no output reads a later row (float64)', () => {
    const s: ShortConvRefShape = { rows: 10, T: 5, C: 3, K: 4 };
    const r = rng(7);
    const x = randn(s.rows * s.C, r);
    const w = randn(s.C * s.K, r);
    const dy = randn(s.rows * s.C, r);
    const { dx, dw } = shortConvBackwardRef(x, w, dy, s);
    const h = 1e-6;
    const fd = (v: Float64Array, f: (v: Float64Array) => number) =>
      v.map((_, i) => {
        const p = v.slice();
        const m = v.slice();
        p[i] += h;
        m[i] -= h;
        return (f(p) - f(m)) / (2 * h);
      });
    expectClose(
      'dx',
      dx,
      fd(x, (v) => dot(shortConvRef(v, w, s), dy)),
      1e-8,
    );
    expectClose(
      'dw',
      dw,
      fd(w, (v) => dot(shortConvRef(x, v, s), dy)),
      1e-8,
    );
    // Causality: changing row r changes no output row before it, nor any row of another sequence.
    const base = shortConvRef(x, w, s);
    const moved = x.slice();
    moved[6 * s.C + 1] += 1; // row 6: position 1 of the second sequence
    const y = shortConvRef(moved, w, s);
    for (let row = 0; row < s.rows; row++) {
      const changed = [0, 1, 2].some((c) => y[row * s.C + c] !== base[row * s.C + c]);
      expect(changed).toBe(row >= 6 && row < 10 && row - 6 < s.K);
    }
  });
});

describe('short convolution kernels', () => {
  // [rows, T, C, K]
  const shapes: [number, number, number, number][] = [
    [1, 1, 1, 1],
    [4, 4, 3, 1],
    [6, 3, 5, 4],
    [12, 1, 7, 3],
    [130, 65, 17, 2],
    [256, 64, 32, 4],
  ];
  it.each(shapes)('rows=%i T=%i C=%i K=%i: forward, dx, dw (and dw accumulate) match the float64 twin to 1e-6', async (rows, T, C, K) => {
    const gpu = await getGpu();
    const s = { rows, T, C, K };
    const r = rng(rows * 13 + C * 3 + K);
    const x = new Float32Array(randn(rows * C, r));
    const w = new Float32Array(randn(C * K, r));
    const dy = new Float32Array(randn(rows * C, r));
    const prior = new Float32Array(randn(C * K, r));
    const n = rows * C;
    const arena = createArena(gpu, 'short_conv', [
      { name: 'x', bytes: n * 4 },
      { name: 'w', bytes: C * K * 4 },
      { name: 'y', bytes: n * 4 },
      { name: 'dy', bytes: n * 4 },
      { name: 'dx', bytes: n * 4 },
      { name: 'dw', bytes: C * K * 4 },
    ]);
    const [xs, ws, ys, dys, dxs, dws] = ['x', 'w', 'y', 'dy', 'dx', 'dw'].map((k) => arena.get(k));
    gpu.write(xs, x);
    gpu.write(ws, w);
    gpu.write(dys, dy);
    gpu.write(dws, prior);
    gpu.run([
      await shortConvForwardDispatch(gpu, { ...s, w: ws, x: xs, out: ys }),
      await shortConvBackwardInputDispatch(gpu, { ...s, w: ws, dout: dys, dx: dxs }),
      await shortConvBackwardWeightDispatch(gpu, { ...s, dout: dys, x: xs, dw: dws, accumulate: true }),
    ]);
    const ref = shortConvBackwardRef(x, w, dy, s);
    expectClose('y', await gpu.readF32(ys, n), shortConvRef(x, w, s), 1e-6);
    expectClose('dx', await gpu.readF32(dxs, n), ref.dx, 1e-6);
    expectClose(
      'dw += ',
      await gpu.readF32(dws, C * K),
      ref.dw.map((v, i) => v + prior[i]),
      1e-6,
    );
    gpu.run([await shortConvBackwardWeightDispatch(gpu, { ...s, dout: dys, x: xs, dw: dws, accumulate: false })]);
    const once = await gpu.readF32(dws, C * K);
    expectClose('dw', once, ref.dw, 1e-6);
    gpu.run([await shortConvBackwardWeightDispatch(gpu, { ...s, dout: dys, x: xs, dw: dws, accumulate: false })]);
    expect(new Uint32Array((await gpu.readF32(dws, C * K)).buffer)).toEqual(new Uint32Array(once.buffer));
  });

  it('rejects bad arguments, naming the field', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'short_conv.bad', [{ name: 'a', bytes: 64 }]);
    const a = arena.get('a');
    await expect(shortConvForwardDispatch(gpu, { rows: 4, T: 4, C: 4, K: 0, w: a, x: a, out: a })).rejects.toThrow(/K/);
    await expect(shortConvForwardDispatch(gpu, { rows: 8, T: 4, C: 4, K: 2, w: a, x: a, out: a })).rejects.toThrow(/x/);
  });
});
