// Wrapper for shaders/reduce.wgsl: deterministic single-dispatch sum (one workgroup).
// Meant for modest n (per-row losses, a few stats); it is correct up to tens of millions of
// elements but uses one workgroup, so large reductions that must be fast use partials
// (see gradnorm.ts).
import code from '../../shaders/reduce.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;

export const REDUCE_KERNEL = defineKernel({
  name: 'reduce',
  files: [['reduce.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['n', 'u32'],
        ['outIndex', 'u32'],
        ['scale', 'f32'],
        ['accumulate', 'u32'],
      ],
    },
  },
  entries: {
    sum: [
      ['x', 'array<f32>'],
      ['out', 'array<f32>'],
    ],
  },
});

export const REDUCE_VARIANTS: readonly KernelVariant[] = [{ kernel: REDUCE_KERNEL, entryPoint: 'sum', constants: { WG } }];

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
  const label = 'reduce.sum';
  const outIndex = a.outIndex ?? 0;
  checkDims(label, { n: a.n, outIndex }, { n: 0, outIndex: 0 });
  checkSlices(label, { x: [a.x, a.n], out: [a.out, outIndex + 1] });
  return kernelDispatch(
    gpu,
    REDUCE_KERNEL,
    'sum',
    {
      uniforms: { P: { n: a.n, outIndex, scale: a.scale, accumulate: a.accumulate ? 1 : 0 } },
      storage: { x: a.x, out: a.out },
      constants: { WG },
      label,
    },
    [1],
  );
}
