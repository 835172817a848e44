import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import {
  GRADNORM_CHUNK,
  GRADNORM_MAX_PARTIALS,
  gradNormChunk,
  gradNormDispatches,
  gradNormPartialsLength,
  type GradRange,
} from '../../src/kernels/gradnorm';
import { gradNormRef } from '../../src/reference/gradnorm';
import { randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-30);

/** Ranges spread over two arenas (two GPU buffers), each range its own slice. */
async function setup(
  gpu: GpuContext,
  sizes: number[],
  seed: number,
  poison?: { range: number; index: number; value: number },
  maxPartials?: number,
) {
  const r = rng(seed);
  const data = sizes.map((n) => new Float32Array(randn(n, r, 0.01)));
  if (poison) data[poison.range][poison.index] = poison.value;
  const half = Math.ceil(sizes.length / 2);
  const a1 = createArena(
    gpu,
    'g1',
    sizes.slice(0, half).map((n, i) => ({ name: `g${i}`, bytes: n * 4 })),
  );
  const a2 = createArena(
    gpu,
    'g2',
    sizes.slice(half).map((n, i) => ({ name: `g${i + half}`, bytes: n * 4 })),
  );
  const ranges: GradRange[] = sizes.map((n, i) => ({ slice: (i < half ? a1 : a2).get(`g${i}`), n }));
  ranges.forEach((rg, i) => gpu.write(rg.slice, data[i]));
  const plen = gradNormPartialsLength(ranges, maxPartials);
  const scratch = createArena(gpu, 'gn', [
    { name: 'partials', bytes: plen * 4 },
    { name: 'stats', bytes: 8 },
  ]);
  return { data, ranges, partials: scratch.get('partials'), stats: scratch.get('stats') };
}

async function normOnGpu(gpu: GpuContext, s: Awaited<ReturnType<typeof setup>>, maxNorm: number, maxPartials?: number) {
  gpu.run(await gradNormDispatches(gpu, { ranges: s.ranges, partials: s.partials, stats: s.stats, maxNorm, maxPartials }));
  return gpu.readF32(s.stats, 2);
}

describe('global gradient norm', () => {
  it('partials length: one per started chunk of each range, at least 1', () => {
    expect(gradNormPartialsLength([])).toBe(1);
    expect(gradNormPartialsLength([{ n: 0 }])).toBe(1);
    expect(gradNormPartialsLength([{ n: 1 }, { n: GRADNORM_CHUNK }, { n: GRADNORM_CHUNK + 1 }])).toBe(4);
  });

  it('the chunk grows with the range: a few thousand partials at most (up to 32 × the smallest chunk), the same on every adapter', () => {
    expect(gradNormChunk(1)).toBe(GRADNORM_CHUNK);
    // It doubles where the doubled chunk still leaves 2048 partials: from 2 · 2047 chunks and one float.
    expect(gradNormChunk(2 * (GRADNORM_MAX_PARTIALS - 1) * GRADNORM_CHUNK)).toBe(GRADNORM_CHUNK);
    expect(gradNormChunk(2 * (GRADNORM_MAX_PARTIALS - 1) * GRADNORM_CHUNK + 1)).toBe(2 * GRADNORM_CHUNK);
    // m7c-125m's gradients (116.8 M floats): 3,565 partials of 32,768 floats instead of 14,259.
    expect(gradNormChunk(116_805_888)).toBe(4 * GRADNORM_CHUNK);
    expect(gradNormPartialsLength([{ n: 116_805_888 }])).toBe(3565);
    for (const n of [1, 5e5, 3.3e7, 1.2e8, 4e9]) {
      const partials = gradNormPartialsLength([{ n }]);
      expect(partials <= 2 * GRADNORM_MAX_PARTIALS || gradNormChunk(n) === 32 * GRADNORM_CHUNK, `n ${n}`).toBe(true);
      expect(partials >= GRADNORM_MAX_PARTIALS || gradNormChunk(n) === GRADNORM_CHUNK, `n ${n}`).toBe(true);
    }
  });

  // f32 vs f64 relative error ≤ 1e-6 on the norm and the scale (sums of squares are all positive).
  it.each([[[1]], [[3, 8193, 0, 1]], [[GRADNORM_CHUNK * 2, 257, 5000]], [[1_000_003]]])(
    'ranges %j match the float64 norm with and without clipping (rel ≤ 1e-6)',
    async (sizes) => {
      const gpu = await getGpu();
      const s = await setup(gpu, sizes, sizes.length * 7 + sizes[0]);
      const ref = gradNormRef(s.data, 0);
      for (const maxNorm of [0, ref.norm * 2, ref.norm * 0.25]) {
        const want = gradNormRef(s.data, maxNorm);
        const [norm, scale] = await normOnGpu(gpu, s, maxNorm);
        expect(relErr(norm, want.norm)).toBeLessThanOrEqual(1e-6);
        expect(relErr(scale, want.scale)).toBeLessThanOrEqual(1e-6);
        expect(want.scale === 1).toBe(maxNorm !== ref.norm * 0.25);
      }
      expect(gpu.reports).toEqual([]);
    },
  );

  it('larger chunks (a small partials cap gives a 1 M range chunks of 131,072 floats, others their own): the float64 norm (rel ≤ 1e-6)', async () => {
    const gpu = await getGpu();
    const sizes = [1_000_003, 70_000, 3];
    expect(sizes.map((n) => gradNormChunk(n, 8))).toEqual([16 * GRADNORM_CHUNK, GRADNORM_CHUNK, GRADNORM_CHUNK]);
    const s = await setup(gpu, sizes, 33, undefined, 8);
    for (const maxNorm of [0, 1e-3]) {
      const want = gradNormRef(s.data, maxNorm);
      const [norm, scale] = await normOnGpu(gpu, s, maxNorm, 8);
      expect(relErr(norm, want.norm)).toBeLessThanOrEqual(1e-6);
      expect(relErr(scale, want.scale)).toBeLessThanOrEqual(1e-6);
    }
    expect(gpu.reports).toEqual([]);
  });

  it.each([
    ['NaN', NaN],
    ['+Inf', Infinity],
    ['-Inf', -Infinity],
  ])('a %s anywhere gives a non-finite norm and scale 0', async (_name, value) => {
    const gpu = await getGpu();
    const s = await setup(gpu, [1000, 20_000, 7], 5, { range: 1, index: 12_345, value });
    const [norm, scale] = await normOnGpu(gpu, s, 1);
    const ref = gradNormRef(s.data, 1);
    expect(Number.isFinite(norm)).toBe(false);
    expect(Number.isNaN(norm)).toBe(Number.isNaN(value));
    expect(scale).toBe(0);
    expect(ref.scale).toBe(0);
  });

  it('is bit-identical across reruns', async () => {
    const gpu = await getGpu();
    const s = await setup(gpu, [123_457, 999], 21);
    const d = await gradNormDispatches(gpu, { ranges: s.ranges, partials: s.partials, stats: s.stats, maxNorm: 0.01 });
    gpu.run(d);
    const a = new Uint32Array((await gpu.readF32(s.stats, 2)).buffer);
    gpu.run(d);
    const b = new Uint32Array((await gpu.readF32(s.stats, 2)).buffer);
    expect(b).toEqual(a);
  });
});
