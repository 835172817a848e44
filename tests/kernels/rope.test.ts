import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { ropeDispatch } from '../../src/kernels/rope';
import { ropeRef } from '../../src/reference/rope';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

describe('rope reference', () => {
  it('rotates pair (j, j + half) by pos · theta^(−2j/headDim) (hand-computed values)', () => {
    // headDim 4, theta 100: pair 0 turns at 1 rad per position, pair 1 at 0.1 rad. Row 5 of T=3 is at position 2.
    const [rows, T, heads, D, theta] = [6, 3, 1, 4, 100];
    const x = new Float64Array(rows * D);
    x[5 * D + 0] = 1; // pair 0, first element
    x[5 * D + 3] = 2; // pair 1, second element
    const y = ropeRef(x, rows, T, heads, D, theta, false);
    const expected = [Math.cos(2), -2 * Math.sin(0.2), Math.sin(2), 2 * Math.cos(0.2)];
    expect(Array.from(y.subarray(5 * D)).every((v, i) => Math.abs(v - expected[i]) < 1e-15)).toBe(true);
    expect(Array.from(y.subarray(0, 5 * D)).every((v) => v === 0)).toBe(true);
  });

  it('inverse is the adjoint and the gradient: ⟨rope(x), y⟩ = ⟨x, rope⁻¹(y)⟩, = central FD, rope⁻¹∘rope = id (float64)', () => {
    const r = rng(4);
    const [rows, T, heads, D, theta] = [5, 4, 2, 6, 10000];
    const n = rows * heads * D;
    const x = randn(n, r);
    const y = randn(n, r);
    const fwd = (v: Float64Array) => ropeRef(v, rows, T, heads, D, theta, false);
    const back = ropeRef(y, rows, T, heads, D, theta, true);
    expect(Math.abs(dot(fwd(x), y) - dot(x, back))).toBeLessThan(1e-12 * Math.sqrt(n));
    const h = 1e-5;
    const fd = x.map((_, i) => {
      const p = x.slice();
      const m = x.slice();
      p[i] += h;
      m[i] -= h;
      return (dot(fwd(p), y) - dot(fwd(m), y)) / (2 * h);
    });
    expectClose('d⟨rope(x), y⟩/dx', back, fd, 1e-9);
    expectClose('rope⁻¹(rope(x))', ropeRef(fwd(x), rows, T, heads, D, theta, true), x, 1e-14);
  });
});

describe('rope kernel', () => {
  // [rows, T, heads, headDim]: minimal; rows not a multiple of T; positions up to 1023 (large angles);
  // pair counts that are not multiples of the 256-invocation workgroup.
  const shapes: [number, number, number, number][] = [
    [1, 1, 1, 2],
    [7, 3, 2, 6],
    [40, 16, 3, 10],
    [1024, 1024, 1, 8],
  ];
  const modes: [string, boolean, boolean][] = [
    ['out-of-place forward', false, false],
    ['in-place (out = x) forward', true, false],
    ['out-of-place inverse', false, true],
    ['in-place (out = x) inverse', true, true],
  ];
  const cases = shapes.flatMap((s) => modes.map((m) => [...s, ...m] as const));

  it.each(cases)(
    'rows=%i T=%i heads=%i headDim=%i, %s: rel RMS ≤ 1e-6 (f32-rounded cos/sin table)',
    async (rows, T, heads, D, _, inPlace, inverse) => {
      const gpu = await getGpu();
      const theta = 10000;
      const n = rows * heads * D;
      const x = new Float32Array(randn(n, rng(rows * 31 + D)));
      const arena = createArena(gpu, 'rope', [
        { name: 'x', bytes: n * 4 },
        { name: 'out', bytes: n * 4 },
      ]);
      const xs = arena.get('x');
      const out = inPlace ? xs : arena.get('out');
      gpu.write(xs, x);
      gpu.run([await ropeDispatch(gpu, { x: xs, out, rows, T, heads, headDim: D, theta, inverse })]);
      const got = await gpu.readF32(out, n);
      // It did rotate (only position 0 is the identity, and rows=1 has nothing else).
      if (rows > 1) expect(Array.from(got).some((v, i) => v !== x[i])).toBe(true);
      expectClose('out', got, ropeRef(x, rows, T, heads, D, theta, inverse), 1e-6);
    },
  );

  it('inverse (the backward) is bit-identical across runs', async () => {
    const gpu = await getGpu();
    const [rows, T, heads, D] = [24, 8, 3, 12];
    const n = rows * heads * D;
    const x = new Float32Array(randn(n, rng(12)));
    const arena = createArena(gpu, 'rope.det', [{ name: 'x', bytes: n * 4 }]);
    const xs = arena.get('x');
    const d = await ropeDispatch(gpu, { x: xs, out: xs, rows, T, heads, headDim: D, theta: 10000, inverse: true });
    const runs: Uint32Array[] = [];
    for (let k = 0; k < 2; k++) {
      gpu.write(xs, x);
      gpu.run([d]);
      runs.push(new Uint32Array(await gpu.read(xs)));
    }
    expect(runs[1]).toEqual(runs[0]);
  });

  it('shares one cos/sin table per (T, headDim, theta): building more dispatches creates no buffer', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'rope.share', [{ name: 'x', bytes: 8 * 2 * 4 * 4 }]);
    const args = { x: arena.get('x'), out: arena.get('x'), rows: 4, T: 4, heads: 2, headDim: 4, theta: 500, inverse: false };
    await ropeDispatch(gpu, args);
    const before = gpu.counters.buffersCreated;
    await ropeDispatch(gpu, { ...args, inverse: true });
    await ropeDispatch(gpu, { ...args, heads: 1, rows: 8 });
    expect(gpu.counters.buffersCreated).toBe(before);
  });

  it('rejects bad arguments, naming the field', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'bad', [{ name: 'x', bytes: 1024 }]);
    const x = arena.get('x');
    const base = { x, out: x, rows: 4, T: 4, heads: 2, headDim: 8, theta: 10000, inverse: false };
    await expect(ropeDispatch(gpu, { ...base, headDim: 7 })).rejects.toThrow(/headDim must be even/);
    await expect(ropeDispatch(gpu, { ...base, T: 0 })).rejects.toThrow(/T must be/);
    await expect(ropeDispatch(gpu, { ...base, theta: -1 })).rejects.toThrow(/theta/);
    await expect(ropeDispatch(gpu, { ...base, rows: 20 })).rejects.toThrow(/x holds/);
    const lo = { ...x, size: 512 };
    const hi = { buffer: x.buffer, offset: x.offset + 512, size: 512 };
    await expect(ropeDispatch(gpu, { ...base, x: lo, out: hi })).resolves.toBeDefined(); // disjoint halves of one buffer
    await expect(ropeDispatch(gpu, { ...base, rows: 1, out: { ...hi, offset: x.offset + 256 } })).rejects.toThrow(/x and out overlap/);
  });
});
