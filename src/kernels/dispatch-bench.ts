// What one dispatch costs on the device (used by `npm run bench`): a chain of dependent one-workgroup
// dispatches in one compute pass (each rewrites the buffer the next reads, so the backend puts a
// barrier between them, as between a training step's kernels), timed at two lengths; the
// difference per added dispatch is the launch-and-barrier cost that npm run gpu:plan assumes
// (LAUNCH_US in src/bench/gpu-plan.ts). The kernel is the gradient norm's finalize over 1 float:
// no memory traffic or arithmetic worth counting.
import { createLayoutArena } from '../gpu/arena';
import type { GpuContext } from '../gpu/context';
import { gradNormDispatches } from './gradnorm';
import { timePass } from './matmul-bench';

export interface DispatchBenchResult {
  /** Dispatches in the long chain (the short one has 1). */
  dispatches: number;
  /** Median time of a pass of 1 and of `dispatches` dispatches, ms. */
  shortMs: number;
  longMs: number;
  /** (longMs − shortMs) / (dispatches − 1), µs. */
  usPerDispatch: number;
  timer: 'timestamp-query' | 'wall';
}

export async function benchDispatch(gpu: GpuContext, dispatches = 512, repeats = 5): Promise<DispatchBenchResult> {
  const { arena, tensors: t } = createLayoutArena(gpu, 'bench.dispatch', (place) => ({
    grad: place('grad', 1),
    partials: place('partials', 1),
    stats: place('stats', 2),
  }));
  try {
    gpu.write(t.grad, new Float32Array([1]));
    // partial (grad → partials) and finalize (partials → stats): the finalize alone, repeated.
    const [, finalize] = await gradNormDispatches(gpu, {
      ranges: [{ slice: t.grad, n: 1 }],
      partials: t.partials,
      stats: t.stats,
      maxNorm: 0,
    });
    const chain = (n: number) => Array.from({ length: n }, () => finalize);
    const time = (n: number) => timePass(gpu, chain(n), repeats);
    await time(dispatches); // warm-up: pipeline compilation and first touch
    const short = await time(1);
    const long = await time(dispatches);
    return {
      dispatches,
      shortMs: short.ms,
      longMs: long.ms,
      usPerDispatch: ((long.ms - short.ms) * 1e3) / (dispatches - 1),
      timer: long.timer,
    };
  } finally {
    for (const b of arena.buffers) b.destroy();
  }
}
