// Wrapper for shaders/gradnorm.wgsl: global gradient L2 norm over several flat f32 ranges (the
// gradient arena may span several GPU buffers) and the clip scale AdamW multiplies gradients by.
import code from '../../shaders/gradnorm.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;
const MIN_ITEMS = 32;
const MAX_ITEMS = 1024;
/** Floats of a range summed by one workgroup into one partial, at the least (small ranges). */
export const GRADNORM_CHUNK = WG * MIN_ITEMS;
/**
 * Partials per range above which a range's chunk doubles: the finalize dispatch is one workgroup
 * on one SM, so its partials are kept to a few thousand (m7c-125m's 117 M gradients: 3,565 of
 * 32,768 floats, not 14,259 of 8,192), while the partial dispatch keeps ≥ 1,024 workgroups.
 */
export const GRADNORM_MAX_PARTIALS = 2048;

/**
 * The floats one workgroup sums for a range of n: GRADNORM_CHUNK, doubled (up to 32×) while the
 * range would still have `maxPartials` partials or more at the doubled chunk. A function of n alone, so
 * every adapter sums in the same order.
 */
export function gradNormChunk(n: number, maxPartials = GRADNORM_MAX_PARTIALS): number {
  let items = MIN_ITEMS;
  while (items < MAX_ITEMS && ceilDiv(n, WG * 2 * items) >= maxPartials) items *= 2;
  return WG * items;
}

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
        ['chunk', 'u32'],
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
  { kernel: GRADNORM_KERNEL, entryPoint: 'partial', constants: { WG } },
  { kernel: GRADNORM_KERNEL, entryPoint: 'finalize', constants: { WG } },
];

const partialsOf = (r: Pick<GradRange, 'n'>, maxPartials?: number) => ceilDiv(r.n, gradNormChunk(r.n, maxPartials));

/** Floats needed in `partials` (at least 1, so the slice can always be bound). */
export function gradNormPartialsLength(ranges: ReadonlyArray<Pick<GradRange, 'n'>>, maxPartials?: number): number {
  return Math.max(
    1,
    ranges.reduce((s, r) => s + partialsOf(r, maxPartials), 0),
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
  /** See gradNormChunk (tests set a small one to reach the larger chunks on small ranges). */
  maxPartials?: number;
}

/**
 * One partial dispatch per non-empty range, then one finalize dispatch; encode them in order.
 * stats[1] = (maxNorm > 0 && norm > maxNorm) ? maxNorm / (norm + 1e-6) : 1, or 0 if not finite.
 * The sum of squares is f32: a norm above ~1.8e19 overflows to Inf and counts as not finite.
 */
export async function gradNormDispatches(gpu: GpuContext, a: GradNormArgs): Promise<Dispatch[]> {
  const kernel = 'gradNorm';
  const total = gradNormPartialsLength(a.ranges, a.maxPartials);
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
    const chunk = gradNormChunk(r.n, a.maxPartials);
    const groups = ceilDiv(r.n, chunk);
    if (groups === 0) continue;
    const label = `gradnorm.partial[${i}]`;
    out.push(
      await kernelDispatch(
        gpu,
        GRADNORM_KERNEL,
        'partial',
        { uniforms: { P: { n: r.n, base, maxNorm: 0, chunk } }, storage: { src: r.slice, dst: a.partials }, constants: { WG }, label },
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
        uniforms: { P: { n: base, base: 0, maxNorm: a.maxNorm, chunk: 0 } },
        storage: { src: a.partials, dst: a.stats },
        constants: { WG },
        label: 'gradnorm.finalize',
      },
      [1],
    ),
  );
  return out;
}
