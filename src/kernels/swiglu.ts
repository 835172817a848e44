// Wrapper for shaders/swiglu.wgsl.
import code from '../../shaders/swiglu.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;

export const SWIGLU_KERNEL = defineKernel({
  name: 'swiglu',
  files: [['swiglu.wgsl', code]],
  uniforms: { P: { struct: 'Params', fields: [['n', 'u32']] } },
  entries: {
    forward: [
      ['a', 'array<f32>'],
      ['b', 'array<f32>'],
      ['y', 'array<f32>'],
    ],
    backward: [
      ['a', 'array<f32>'],
      ['b', 'array<f32>'],
      ['y', 'array<f32>'],
      ['da', 'array<f32>'],
      ['db', 'array<f32>'],
    ],
  },
});

export const SWIGLU_VARIANTS: readonly KernelVariant[] = [
  { kernel: SWIGLU_KERNEL, entryPoint: 'forward', constants: { WG } },
  { kernel: SWIGLU_KERNEL, entryPoint: 'backward', constants: { WG } },
];

export interface SwigluForwardArgs {
  a: BufferSlice;
  b: BufferSlice;
  out: BufferSlice;
  n: number;
}

export interface SwigluBackwardArgs {
  dout: BufferSlice;
  a: BufferSlice;
  b: BufferSlice;
  /** Overwritten. */
  da: BufferSlice;
  /** Overwritten. */
  db: BufferSlice;
  n: number;
}

/** out = silu(a) · b over n floats. No two slices may overlap (WebGPU forbids aliased writable bindings). */
export async function swigluForwardDispatch(gpu: GpuContext, a: SwigluForwardArgs): Promise<Dispatch> {
  const label = 'swiglu.forward';
  const { n } = a;
  checkDims(label, { n });
  checkSlices(label, { a: [a.a, n], b: [a.b, n], out: [a.out, n] });
  return kernelDispatch(
    gpu,
    SWIGLU_KERNEL,
    'forward',
    { uniforms: { P: { n } }, storage: { a: a.a, b: a.b, y: a.out }, constants: { WG }, label },
    grid1d(ceilDiv(n, WG)),
  );
}

/** da = dout · b · silu'(a), db = dout · silu(a). */
export async function swigluBackwardDispatch(gpu: GpuContext, a: SwigluBackwardArgs): Promise<Dispatch> {
  const label = 'swiglu.backward';
  const { n } = a;
  checkDims(label, { n });
  checkSlices(label, { a: [a.a, n], b: [a.b, n], dout: [a.dout, n], da: [a.da, n], db: [a.db, n] });
  return kernelDispatch(
    gpu,
    SWIGLU_KERNEL,
    'backward',
    { uniforms: { P: { n } }, storage: { a: a.a, b: a.b, y: a.dout, da: a.da, db: a.db }, constants: { WG }, label },
    grid1d(ceilDiv(n, WG)),
  );
}
