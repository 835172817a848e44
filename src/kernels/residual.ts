// Wrapper for shaders/residual.wgsl.
import code from '../../shaders/residual.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;

export const RESIDUAL_KERNEL = defineKernel({
  name: 'residual',
  files: [['residual.wgsl', code]],
  uniforms: { P: { struct: 'Params', fields: [['n', 'u32']] } },
  entries: {
    add: [
      ['a', 'array<f32>'],
      ['b', 'array<f32>'],
      ['out', 'array<f32>'],
    ],
  },
});

export const RESIDUAL_VARIANTS: readonly KernelVariant[] = [{ kernel: RESIDUAL_KERNEL, entryPoint: 'add', constants: { WG } }];

/** out[i] = a[i] + b[i] for i < n. No two slices may overlap (every storage binding is read_write). */
export async function addDispatch(gpu: GpuContext, a: BufferSlice, b: BufferSlice, out: BufferSlice, n: number): Promise<Dispatch> {
  const label = 'residual.add';
  checkDims(label, { n }, { n: 0 });
  checkSlices(label, { a: [a, n], b: [b, n], out: [out, n] });
  return kernelDispatch(
    gpu,
    RESIDUAL_KERNEL,
    'add',
    { uniforms: { P: { n } }, storage: { a, b, out }, constants: { WG }, label },
    grid1d(ceilDiv(n, WG)),
  );
}
