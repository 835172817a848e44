import { describe, expect, it } from 'vitest';

import { type BufferSlice, createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import {
  defaultTiling,
  matmulDispatch,
  matmulDispatches,
  type MatmulOptions,
  type MatmulSplitOptions,
  type MatmulTiling,
  TILING_CPU,
  TILING_CPU_SMALL,
  TILING_GPU_LARGE,
  TILING_GPU_SMALL,
} from '../../src/kernels/matmul';
import { benchMatmul } from '../../src/kernels/matmul-bench';
import { matmulRef } from '../../src/reference/matmul';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

// f32 vs f64: K ≤ 160 products summed in f32 give a relative RMS error of ~1e-7; 1e-6 leaves a
// margin of ~10× while still failing on any wrong, missing or doubled term.
const TOL = 1e-6;

interface Case {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  accumulate: boolean;
}

// 1×1×1; odd sizes; sizes that are not multiples of any tile (with and without vec4-aligned rows);
// one moderately large, all multiples of 4 (the vec4 path for every transpose).
const SHAPES: ReadonlyArray<[number, number, number]> = [
  [1, 1, 1],
  [7, 13, 5],
  [33, 65, 17],
  [130, 70, 36],
  [128, 96, 160],
];

const allCases = (shapes: ReadonlyArray<[number, number, number]>): Case[] =>
  shapes.flatMap(([M, N, K]) =>
    [false, true].flatMap((transA) =>
      [false, true].flatMap((transB) => [false, true].map((accumulate) => ({ M, N, K, transA, transB, accumulate }))),
    ),
  );

const caseName = (c: Case) => `${c.M}x${c.N}x${c.K} ${c.transA ? 'T' : 'N'}${c.transB ? 'T' : 'N'}${c.accumulate ? ' +=' : ''}`;

/**
 * Runs every case in one pass (each with its own a, b, c in one arena), reads the arena back once
 * and checks each c against matmulRef. Overwrite cases start from NaN, so reading c fails them.
 * `opts.splits`: each case split over K (matmulDispatches) with its own partial-sum scratch, NaN
 * at the start, so a chunk not written fails the case.
 */
async function checkCases(gpu: GpuContext, cases: Case[], opts: MatmulOptions & { splits?: number }, seed: number): Promise<number> {
  const r = rng(seed);
  const splits = opts.splits;
  const arena = createArena(
    gpu,
    'matmul.test',
    cases.flatMap((c, i) => [
      { name: `a${i}`, bytes: c.M * c.K * 4 },
      { name: `b${i}`, bytes: c.K * c.N * 4 },
      { name: `c${i}`, bytes: c.M * c.N * 4 },
      ...(splits ? [{ name: `p${i}`, bytes: splits * c.M * c.N * 4 }] : []),
    ]),
  );
  expect(arena.buffers.length).toBe(1);
  const inputs = cases.map((c, i) => {
    const a = new Float32Array(randn(c.M * c.K, r));
    const b = new Float32Array(randn(c.K * c.N, r));
    const c0 = c.accumulate ? new Float32Array(randn(c.M * c.N, r)) : new Float32Array(c.M * c.N).fill(NaN);
    gpu.write(arena.get(`a${i}`), a);
    gpu.write(arena.get(`b${i}`), b);
    gpu.write(arena.get(`c${i}`), c0);
    if (splits) gpu.write(arena.get(`p${i}`), new Float32Array(splits * c.M * c.N).fill(NaN));
    return { a, b, c0 };
  });
  const dispatches = await Promise.all(
    cases.map((c, i) => {
      const args = { ...c, a: arena.get(`a${i}`), b: arena.get(`b${i}`), c: arena.get(`c${i}`), label: caseName(c) };
      return splits ? matmulDispatches(gpu, args, { ...opts, parts: arena.get(`p${i}`) }) : matmulDispatch(gpu, args, opts);
    }),
  );
  // A forced split of n chunks runs two passes (the products, then the sum).
  if (splits) expect(dispatches.map((d) => (Array.isArray(d) ? d.length : 1))).toEqual(cases.map(() => 2));
  gpu.run(dispatches.flat());
  const whole = await gpu.read({ buffer: arena.buffers[0], offset: 0, size: arena.buffers[0].size });
  let worst = 0;
  cases.forEach((c, i) => {
    const slice = arena.get(`c${i}`);
    const out = new Float32Array(whole, slice.offset, c.M * c.N);
    const { a, b, c0 } = inputs[i];
    const ref = matmulRef(a, b, c.M, c.N, c.K, { transA: c.transA, transB: c.transB, c: c.accumulate ? c0 : undefined });
    worst = Math.max(worst, expectClose(caseName(c), out, ref, TOL));
  });
  arena.buffers[0].destroy();
  expect(gpu.reports).toEqual([]);
  return worst;
}

const tilingName = (t: MatmulTiling) => `${t.WGX}x${t.WGY} invocations, R=${t.R}, TK=${t.TK}, vec4 ${t.vec4Loads}`;

describe('matmul vs float64 reference (rel RMS ≤ 1e-6)', () => {
  it('picks the default tiling by adapter and shape', async () => {
    const gpu = await getGpu();
    if (gpu.adapter.software) {
      // On SwiftShader the tests below then cover both default paths.
      expect(defaultTiling(gpu, 128, 96, 160)).toBe(TILING_CPU_SMALL);
      expect(defaultTiling(gpu, 256, 256, 256)).toBe(TILING_CPU);
    } else {
      expect(defaultTiling(gpu, 512, 512, 512)).toBe(TILING_GPU_SMALL);
      expect(defaultTiling(gpu, 4096, 4096, 64)).toBe(TILING_GPU_LARGE);
    }
  });

  // The two CPU tilings (R = 2 and R = 4, the defaults on SwiftShader) and a GPU tiling (R = 2, vec4 loads,
  // more invocations than staging blocks, TK = 8). TILING_GPU_SMALL runs the same code with other
  // override values; it is left out because each pipeline costs SwiftShader 1.5–4 s of CPU to compile.
  it.each([TILING_CPU_SMALL, TILING_CPU, TILING_GPU_LARGE].map((t) => [tilingName(t), t] as const))(
    'all transposes × accumulate × odd and tile-straddling shapes, tiling %s',
    async (_name, tiling) => {
      const gpu = await getGpu();
      const worst = await checkCases(gpu, allCases(SHAPES), { tiling }, 7);
      expect(worst).toBeGreaterThan(0); // f32 rounding is visible: the comparison is real
    },
  );

  it('folds a grid beyond the per-dimension workgroup limit', async () => {
    const gpu = await getGpu();
    // 130×200 in 32×32 tiles is 5×7 = 35 tiles; at most 6 per dimension gives a 6×6 grid with one
    // idle workgroup. Same code path as a fold past 65,535, at test size.
    const cases = allCases([[130, 200, 9]]).filter((c) => c.accumulate === c.transA);
    await checkCases(gpu, cases, { tiling: TILING_CPU_SMALL, maxWorkgroupsPerDim: 6 }, 11);
  });
});

// Split over K (matmulDispatches): 3 chunks of ceil(K / 3), not multiples of any tiling's K step
// (K = 160: chunks of 54 with TK = 16), so the chunk ends are masked inside a step; K ≥ 3.
describe('matmul split over K vs float64 reference (rel RMS ≤ 1e-6)', () => {
  it('3 chunks: all transposes × accumulate × odd and tile-straddling shapes', async () => {
    const gpu = await getGpu();
    const cases = allCases(SHAPES.filter(([, , K]) => K >= 3));
    const worst = await checkCases(gpu, cases, { tiling: TILING_CPU_SMALL, splits: 3 }, 13);
    expect(worst).toBeGreaterThan(0);
  });

  it('same bits on every run for a fixed split; one chunk is the single pass; bad splits refused', async () => {
    const gpu = await getGpu();
    const [M, N, K] = [33, 65, 70];
    const r = rng(5);
    const arena = createArena(gpu, 'matmul.split', [
      { name: 'a', bytes: K * M * 4 },
      { name: 'b', bytes: K * N * 4 },
      { name: 'c', bytes: M * N * 4 },
      { name: 'p', bytes: 4 * M * N * 4 },
    ]);
    const [a, b, c, p] = ['a', 'b', 'c', 'p'].map((n) => arena.get(n));
    gpu.write(a, new Float32Array(randn(K * M, r)));
    gpu.write(b, new Float32Array(randn(K * N, r)));
    const args = { a, b, c, M, N, K, transA: true };
    const opts: MatmulSplitOptions = { tiling: TILING_CPU_SMALL, parts: p, splits: 4 };
    const split = await matmulDispatches(gpu, args, opts);
    expect(split.map((d) => d.label)).toEqual(['matmul', 'matmul.sum']);
    const runRead = async (list: Parameters<GpuContext['run']>[0]) => {
      gpu.write(c, new Float32Array(M * N).fill(NaN));
      gpu.run(list);
      return new Uint32Array(await gpu.read(c, M * N * 4));
    };
    const first = await runRead(split);
    expect(await runRead(split)).toEqual(first);
    const whole = await matmulDispatches(gpu, args, { ...opts, splits: 1 });
    expect(whole).toHaveLength(1);
    expect(await runRead(whole)).toEqual(await runRead([await matmulDispatch(gpu, args, opts)]));
    // No scratch, or too little, or more chunks than K, or a scratch overlapping c: refused.
    await expect(matmulDispatches(gpu, args, { tiling: TILING_CPU_SMALL, splits: 4 })).rejects.toThrow(/needs a parts scratch/);
    await expect(matmulDispatches(gpu, args, { ...opts, splits: 5 })).rejects.toThrow(/parts holds/);
    await expect(matmulDispatches(gpu, args, { ...opts, splits: K + 1 })).rejects.toThrow(/exceeds K/);
    await expect(matmulDispatches(gpu, args, { ...opts, parts: { ...c, size: 4 * M * N * 4 } })).rejects.toThrow(/overlap/);
    // Without a scratch and without forced chunks nothing is split (and on software adapters never).
    expect(await matmulDispatches(gpu, args, { tiling: TILING_CPU_SMALL })).toHaveLength(1);
    arena.buffers[0].destroy();
  });
});

describe('matmul determinism and validation', () => {
  it('gives bit-identical output when run twice', async () => {
    const gpu = await getGpu();
    const [M, N, K] = [33, 65, 17];
    const r = rng(3);
    const arena = createArena(gpu, 'matmul.det', [
      { name: 'a', bytes: K * M * 4 },
      { name: 'b', bytes: N * K * 4 },
      { name: 'c', bytes: M * N * 4 },
    ]);
    gpu.write(arena.get('a'), new Float32Array(randn(K * M, r)));
    gpu.write(arena.get('b'), new Float32Array(randn(N * K, r)));
    const d = await matmulDispatch(gpu, { a: arena.get('a'), b: arena.get('b'), c: arena.get('c'), M, N, K, transA: true, transB: true });
    gpu.run([d]);
    const first = new Uint32Array(await gpu.read(arena.get('c'), M * N * 4));
    gpu.write(arena.get('c'), new Float32Array(M * N).fill(NaN));
    gpu.run([d]);
    const second = new Uint32Array(await gpu.read(arena.get('c'), M * N * 4));
    expect(first.some((w) => w !== 0)).toBe(true);
    expect(second).toEqual(first);
    arena.buffers[0].destroy();
  });

  it('rejects bad shapes, short slices and an output overlapping an input', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'matmul.bad', [
      { name: 'a', bytes: 64 },
      { name: 'b', bytes: 64 },
      { name: 'c', bytes: 64 },
    ]);
    const a = arena.get('a');
    const b = arena.get('b');
    const c = arena.get('c');
    const within: BufferSlice = { buffer: a.buffer, offset: a.offset, size: 16 };
    await expect(matmulDispatch(gpu, { a, b, c, M: 0, N: 4, K: 4 })).rejects.toThrow(/M = 0/);
    await expect(matmulDispatch(gpu, { a, b, c, M: 4, N: 4, K: 2.5 })).rejects.toThrow(/K = 2.5/);
    await expect(matmulDispatch(gpu, { a, b, c, M: 8, N: 4, K: 4 })).rejects.toThrow(/a holds 64 bytes, needs 128/);
    await expect(matmulDispatch(gpu, { a, b, c: within, M: 2, N: 2, K: 2 })).rejects.toThrow(/a and c overlap/);
    arena.buffers[0].destroy();
  });
});

describe('benchMatmul', () => {
  it('reports one finite, positive measurement per size', async () => {
    const gpu = await getGpu();
    const res = await benchMatmul(gpu, [{ M: 64, N: 48, K: 32, transB: true }], { repeats: 2 });
    expect(res).toHaveLength(1);
    const [r] = res;
    expect(r).toMatchObject({ M: 64, N: 48, K: 32, transA: false, transB: true });
    expect(Number.isFinite(r.ms) && r.ms > 0).toBe(true);
    expect(Number.isFinite(r.gflops) && r.gflops > 0).toBe(true);
    expect(r.gflops).toBeCloseTo((2 * 64 * 48 * 32) / (r.ms * 1e6), 6);
    expect(['timestamp-query', 'wall']).toContain(r.timer);
    if (!gpu.hasTimestamps) expect(r.timer).toBe('wall');
  });
});
