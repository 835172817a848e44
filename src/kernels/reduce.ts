// Wrapper for shaders/reduce.wgsl: deterministic single-dispatch sum (one workgroup).
// Meant for modest n (per-row losses, a few stats); it is correct up to tens of millions of
// elements but uses one workgroup, so large reductions that must be fast use partials
// (see gradnorm.ts).
import code from '../../shaders/reduce.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { f32 } from '../gpu/uniforms';

const WG = 256;

export interface SumArgs {
  x: BufferSlice;
  n: number;
  out: BufferSlice;
  /** Float index into `out` (default 0). */
  outIndex?: number;
  scale: number;
  /** true: out[outIndex] += scale·Σx; false: out[outIndex] = scale·Σx. */
  accumulate: boolean;
}

/** out[outIndex] (=|+=) scale * Σ_{i<n} x[i], in a fixed order (same bits every run). */
export async function sumDispatch(gpu: GpuContext, a: SumArgs): Promise<Dispatch> {
  const outIndex = a.outIndex ?? 0;
  if (!Number.isInteger(a.n) || a.n < 0) throw new Error(`sum: n = ${a.n} must be a non-negative integer`);
  if (!Number.isInteger(outIndex) || outIndex < 0) throw new Error(`sum: outIndex = ${outIndex} must be a non-negative integer`);
  if (a.n * 4 > a.x.size) throw new Error(`sum: x holds ${a.x.size} bytes, n = ${a.n} needs ${a.n * 4}`);
  if ((outIndex + 1) * 4 > a.out.size) throw new Error(`sum: outIndex ${outIndex} is outside a ${a.out.size}-byte out`);
  // Both bindings are writable: WebGPU rejects overlapping ranges of one buffer.
  if (a.x.buffer === a.out.buffer && a.out.offset < a.x.offset + a.x.size && a.x.offset < a.out.offset + a.out.size)
    throw new Error('sum: x and out overlap');
  const words = [a.n, outIndex, f32(a.scale), a.accumulate ? 1 : 0];
  return gpu.dispatch({ code, entryPoint: 'sum', constants: { WG }, label: 'reduce.sum' }, [gpu.uniform(words), a.x, a.out], [1]);
}
