// Wrapper for shaders/gradnorm.wgsl: global gradient L2 norm over several flat f32 ranges (the
// gradient arena may span several GPU buffers) and the clip scale AdamW multiplies gradients by.
import code from '../../shaders/gradnorm.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32 } from '../gpu/uniforms';

const WG = 256;
const ITEMS = 32;
/** Floats of a range summed by one workgroup into one partial. */
export const GRADNORM_CHUNK = WG * ITEMS;

export interface GradRange {
  slice: BufferSlice;
  /** Floats of the range, from the start of `slice`. */
  n: number;
}

const partialsOf = (r: GradRange) => ceilDiv(r.n, GRADNORM_CHUNK);

/** Floats needed in `partials` (at least 1, so the slice can always be bound). */
export function gradNormPartialsLength(ranges: readonly GradRange[]): number {
  return Math.max(1, ranges.reduce((s, r) => s + partialsOf(r), 0));
}

export interface GradNormArgs {
  ranges: readonly GradRange[];
  /** f32 scratch of gradNormPartialsLength(ranges) floats. */
  partials: BufferSlice;
  /** f32 [2]: ‖g‖₂, then the clip scale (0 when the norm is NaN/Inf). */
  stats: BufferSlice;
  /** Clip threshold; ≤ 0 disables clipping. */
  maxNorm: number;
}

const overlap = (a: BufferSlice, b: BufferSlice) =>
  a.buffer === b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;

/**
 * One partial dispatch per non-empty range, then one finalize dispatch; encode them in order.
 * stats[1] = (maxNorm > 0 && norm > maxNorm) ? maxNorm / (norm + 1e-6) : 1, or 0 if not finite.
 * The sum of squares is f32: a norm above ~1.8e19 overflows to Inf and counts as not finite.
 */
export async function gradNormDispatches(gpu: GpuContext, a: GradNormArgs): Promise<Dispatch[]> {
  const total = gradNormPartialsLength(a.ranges);
  if (a.partials.size < total * 4) throw new Error(`gradNorm: partials holds ${a.partials.size} bytes, needs ${total * 4}`);
  if (a.stats.size < 8) throw new Error(`gradNorm: stats holds ${a.stats.size} bytes, needs 8`);
  if (overlap(a.partials, a.stats)) throw new Error('gradNorm: partials and stats overlap');
  const out: Dispatch[] = [];
  let base = 0;
  for (const [i, r] of a.ranges.entries()) {
    if (!Number.isInteger(r.n) || r.n < 0 || r.n >= 2 ** 32 - GRADNORM_CHUNK) throw new Error(`gradNorm: range ${i} has n = ${r.n}`);
    if (r.slice.size < r.n * 4) throw new Error(`gradNorm: range ${i} holds ${r.slice.size} bytes, n = ${r.n} needs ${r.n * 4}`);
    if (overlap(r.slice, a.partials)) throw new Error(`gradNorm: range ${i} overlaps partials`);
    const groups = partialsOf(r);
    if (groups === 0) continue;
    const label = `gradnorm.partial[${i}]`;
    out.push(
      await gpu.dispatch({ code, entryPoint: 'partial', constants: { WG, ITEMS }, label }, [gpu.uniform([r.n, base, f32(0)]), r.slice, a.partials], grid1d(groups)),
    );
    base += groups;
  }
  const uniform = gpu.uniform([base, 0, f32(a.maxNorm)]);
  out.push(await gpu.dispatch({ code, entryPoint: 'finalize', constants: { WG }, label: 'gradnorm.finalize' }, [uniform, a.partials, a.stats], [1]));
  return out;
}
