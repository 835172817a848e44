// Wrapper for shaders/gradnorm.wgsl: global gradient L2 norm over several flat f32 ranges (the
// gradient arena may span several GPU buffers) and the clip scale AdamW multiplies gradients by.
import code from '../../shaders/gradnorm.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;
const ITEMS = 32;
/** Floats of a range summed by one workgroup into one partial. */
export const GRADNORM_CHUNK = WG * ITEMS;

export interface GradRange {
  slice: BufferSlice;
  /** Floats of the range, from the start of `slice`. */
  n: number;
}

export const GRADNORM_KERNEL = defineKernel({
  name: 'gradnorm',
  files: [['gradnorm.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['n', 'u32'],
        ['base', 'u32'],
        ['maxNorm', 'f32'],
      ],
    },
  },
  entries: {
    partial: [
      ['src', 'array<f32>'],
      ['dst', 'array<f32>'],
    ],
    finalize: [
      ['src', 'array<f32>'],
      ['dst', 'array<f32>'],
    ],
  },
});

export const GRADNORM_VARIANTS: readonly KernelVariant[] = [
  { kernel: GRADNORM_KERNEL, entryPoint: 'partial', constants: { WG, ITEMS } },
  { kernel: GRADNORM_KERNEL, entryPoint: 'finalize', constants: { WG } },
];

const partialsOf = (r: GradRange) => ceilDiv(r.n, GRADNORM_CHUNK);

/** Floats needed in `partials` (at least 1, so the slice can always be bound). */
export function gradNormPartialsLength(ranges: readonly GradRange[]): number {
  return Math.max(
    1,
    ranges.reduce((s, r) => s + partialsOf(r), 0),
  );
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

/**
 * One partial dispatch per non-empty range, then one finalize dispatch; encode them in order.
 * stats[1] = (maxNorm > 0 && norm > maxNorm) ? maxNorm / (norm + 1e-6) : 1, or 0 if not finite.
 * The sum of squares is f32: a norm above ~1.8e19 overflows to Inf and counts as not finite.
 */
export async function gradNormDispatches(gpu: GpuContext, a: GradNormArgs): Promise<Dispatch[]> {
  const kernel = 'gradNorm';
  const total = gradNormPartialsLength(a.ranges);
  checkSlices(kernel, { partials: [a.partials, total], stats: [a.stats, 2] });
  for (const [i, r] of a.ranges.entries()) {
    const name = `range ${i}`;
    if (!Number.isInteger(r.n) || r.n < 0 || r.n >= 2 ** 32 - GRADNORM_CHUNK) argumentError(kernel, name, `${name} has n = ${r.n}`);
    // A range is bound with partials only (ranges may share a buffer with each other).
    checkSlices(kernel, { [name]: [r.slice, r.n], partials: [a.partials, total] });
  }
  const out: Dispatch[] = [];
  let base = 0;
  for (const [i, r] of a.ranges.entries()) {
    const groups = partialsOf(r);
    if (groups === 0) continue;
    const label = `gradnorm.partial[${i}]`;
    out.push(
      await kernelDispatch(
        gpu,
        GRADNORM_KERNEL,
        'partial',
        { uniforms: { P: { n: r.n, base, maxNorm: 0 } }, storage: { src: r.slice, dst: a.partials }, constants: { WG, ITEMS }, label },
        grid1d(groups),
      ),
    );
    base += groups;
  }
  out.push(
    await kernelDispatch(
      gpu,
      GRADNORM_KERNEL,
      'finalize',
      {
        uniforms: { P: { n: base, base: 0, maxNorm: a.maxNorm } },
        storage: { src: a.partials, dst: a.stats },
        constants: { WG },
        label: 'gradnorm.finalize',
      },
      [1],
    ),
  );
  return out;
}
