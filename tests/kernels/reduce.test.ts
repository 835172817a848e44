import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { sumDispatch } from '../../src/kernels/reduce';
import { sumRef } from '../../src/reference/reduce';
import { randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-30);

async function setup(n: number, outLen: number, seed: number) {
  const gpu = await getGpu();
  const r = rng(seed);
  // Mean-0.3 data: a realistic sum of losses is far from zero; random sign keeps partial sums honest.
  const x = new Float32Array(randn(n, r).map((v) => v + 0.3));
  const arena = createArena(gpu, 'sum', [
    { name: 'x', bytes: n * 4 },
    { name: 'out', bytes: outLen * 4 },
  ]);
  gpu.write(arena.get('x'), x);
  return { gpu, x, xs: arena.get('x'), out: arena.get('out') };
}

describe('deterministic sum', () => {
  // f32 vs f64: relative error ≤ 1e-6 (blocked per-thread sums + a tree keep the error near eps·log n).
  it.each([1, 2, 255, 256, 257, 1000, 33_333, 1_000_003])('n=%i matches the float64 sum (rel ≤ 1e-6)', async (n) => {
    const { gpu, x, xs, out } = await setup(n, 1, n);
    const scale = 1 / n;
    gpu.run([await sumDispatch(gpu, { x: xs, n, out, scale, accumulate: false })]);
    const [got] = await gpu.readF32(out, 1);
    expect(relErr(got, scale * sumRef(x, n))).toBeLessThanOrEqual(1e-6);
  });

  it('writes out[outIndex] only, accumulates when asked (rel ≤ 1e-6)', async () => {
    const n = 777;
    const { gpu, x, xs, out } = await setup(n, 5, 3);
    const init = new Float32Array([10, 20, 30, 40, 50]);
    gpu.write(out, init);
    const s = sumRef(x, n);
    gpu.run([
      await sumDispatch(gpu, { x: xs, n, out, outIndex: 3, scale: 2, accumulate: true }),
      await sumDispatch(gpu, { x: xs, n, out, outIndex: 1, scale: -0.5, accumulate: false }),
    ]);
    const got = await gpu.readF32(out, 5);
    expect([got[0], got[2], got[4]]).toEqual([10, 30, 50]);
    expect(relErr(got[3], 40 + 2 * s)).toBeLessThanOrEqual(1e-6);
    expect(relErr(got[1], -0.5 * s)).toBeLessThanOrEqual(1e-6);
    // Accumulating twice adds twice.
    gpu.run([await sumDispatch(gpu, { x: xs, n, out, outIndex: 3, scale: 2, accumulate: true })]);
    const again = await gpu.readF32(out, 5);
    expect(relErr(again[3], 40 + 4 * s)).toBeLessThanOrEqual(1e-6);
  });

  it('is bit-identical across reruns (n=100,003)', async () => {
    const n = 100_003;
    const { gpu, xs, out } = await setup(n, 2, 11);
    const d0 = await sumDispatch(gpu, { x: xs, n, out, outIndex: 0, scale: 1, accumulate: false });
    const d1 = await sumDispatch(gpu, { x: xs, n, out, outIndex: 1, scale: 1, accumulate: false });
    gpu.run([d0, d1]);
    const a = new Uint32Array((await gpu.readF32(out, 2)).buffer);
    gpu.run([d0]);
    const b = new Uint32Array((await gpu.readF32(out, 2)).buffer);
    expect(a[1]).toBe(a[0]);
    expect(b[0]).toBe(a[0]);
  });

  it('rejects an out that overlaps x', async () => {
    const { gpu, xs } = await setup(16, 1, 1);
    await expect(sumDispatch(gpu, { x: xs, n: 16, out: xs, outIndex: 0, scale: 1, accumulate: false })).rejects.toThrow(/overlap/);
    expect(gpu.reports).toEqual([]);
  });
});
