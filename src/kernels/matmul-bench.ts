// Matmul throughput on the given device (used by `npm run bench`). Timed with timestamp queries
// (one compute pass per repetition) where the device has them, else wall clock around gpu.finish().
import { createLayoutArena } from '../gpu/arena';
import { type Dispatch, GpuContext } from '../gpu/context';
import { mulberry32 } from '../util/random';
import { matmulDispatch, type MatmulTiling } from './matmul';

export interface MatmulBenchResult {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  /** Median time of one matmul over the repetitions, in milliseconds. */
  ms: number;
  gflops: number;
  timer: 'timestamp-query' | 'wall';
}

export interface MatmulBenchSize {
  M: number;
  N: number;
  K: number;
  transA?: boolean;
  transB?: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

function randomFloats(n: number, seed: number): Float32Array {
  const r = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = r() * 2 - 1;
  return out;
}

/** Per-repetition milliseconds from timestamp queries: one pass per repetition, one submit. */
async function timeWithTimestamps(gpu: GpuContext, ds: readonly Dispatch[], repeats: number): Promise<number[]> {
  const count = 2 * repeats;
  const querySet = gpu.device.createQuerySet({ type: 'timestamp', count });
  const resolve = gpu.createBuffer({ size: count * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const staging = gpu.createBuffer({ size: count * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const enc = gpu.device.createCommandEncoder();
    for (let r = 0; r < repeats; r++) {
      const pass = enc.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * r, endOfPassWriteIndex: 2 * r + 1 },
      });
      GpuContext.encode(pass, ds);
      pass.end();
    }
    enc.resolveQuerySet(querySet, 0, count, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, staging, 0, count * 8);
    gpu.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(staging.getMappedRange().slice(0));
    staging.unmap();
    const ms: number[] = [];
    for (let r = 0; r < repeats; r++) ms.push(Number(t[2 * r + 1] - t[2 * r]) / 1e6);
    return ms;
  } finally {
    querySet.destroy();
    resolve.destroy();
    staging.destroy();
  }
}

async function timeWithWallClock(gpu: GpuContext, ds: readonly Dispatch[], repeats: number): Promise<number[]> {
  const ms: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    gpu.run(ds);
    await gpu.finish();
    ms.push(performance.now() - t0);
  }
  return ms;
}

/**
 * The median time of one compute pass of `ds` over `repeats` passes: timestamp queries where the
 * device has them, else (or where they read 0: browsers quantize them to ~0.1 ms) the wall clock
 * around each pass and its finish.
 */
export async function timePass(
  gpu: GpuContext,
  ds: readonly Dispatch[],
  repeats: number,
): Promise<{ ms: number; timer: 'timestamp-query' | 'wall' }> {
  if (gpu.hasTimestamps) {
    const ms = median(await timeWithTimestamps(gpu, ds, repeats));
    if (ms > 0) return { ms, timer: 'timestamp-query' };
  }
  return { ms: median(await timeWithWallClock(gpu, ds, repeats)), timer: 'wall' };
}

/**
 * Times each size (after one warm-up run) and reports the median over `repeats` (default 5).
 * Creates and destroys its own buffers: this is not a training step.
 */
export async function benchMatmul(
  gpu: GpuContext,
  sizes: MatmulBenchSize[],
  opts: { repeats?: number; tiling?: MatmulTiling } = {},
): Promise<MatmulBenchResult[]> {
  const repeats = Math.max(1, opts.repeats ?? 5);
  const results: MatmulBenchResult[] = [];
  for (const [i, s] of sizes.entries()) {
    const { M, N, K } = s;
    const transA = s.transA ?? false;
    const transB = s.transB ?? false;
    const { arena, tensors: t } = createLayoutArena(gpu, `bench.matmul${i}`, (place) => ({
      a: place('a', M * K),
      b: place('b', K * N),
      c: place('c', M * N),
    }));
    try {
      gpu.write(t.a, randomFloats(M * K, 2 * i + 1));
      gpu.write(t.b, randomFloats(K * N, 2 * i + 2));
      const d = await matmulDispatch(
        gpu,
        { a: t.a, b: t.b, c: t.c, M, N, K, transA, transB, label: 'bench.matmul' },
        { tiling: opts.tiling },
      );
      gpu.run([d]); // warm-up: pipeline compilation (lazy on some backends) and first touch
      await gpu.finish();
      const { ms, timer } = await timePass(gpu, [d], repeats);
      results.push({ M, N, K, transA, transB, ms, gflops: (2 * M * N * K) / (ms * 1e6), timer });
    } finally {
      for (const b of arena.buffers) b.destroy();
    }
  }
  return results;
}
