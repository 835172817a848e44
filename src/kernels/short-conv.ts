// Wrapper for shaders/short_conv.wgsl: the causal depthwise convolution on keys (docs/nsa-spec.md
// 3.1), its input gradient and its weight gradient.
import code from '../../shaders/short_conv.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 64;

export const SHORT_CONV_KERNEL = defineKernel({
  name: 'short_conv',
  files: [['short_conv.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['rows', 'u32', 'B · T'],
        ['T', 'u32'],
        ['C', 'u32', 'channels (G · dk)'],
        ['K', 'u32', 'taps'],
        ['accumulate', 'u32', 'backwardWeight: add to dw instead of overwriting it'],
      ],
    },
  },
  entries: {
    forward: [
      ['w', 'array<f32>'],
      ['x', 'array<f32>'],
      ['out', 'array<f32>'],
    ],
    backwardInput: [
      ['w', 'array<f32>'],
      ['dout', 'array<f32>'],
      ['dx', 'array<f32>'],
    ],
    // The forward's input is bound as convIn here: a binding name keeps one index in every entry.
    backwardWeight: [
      ['dw', 'array<f32>'],
      ['dout', 'array<f32>'],
      ['convIn', 'array<f32>'],
    ],
  },
});

export const SHORT_CONV_VARIANTS: readonly KernelVariant[] = (['forward', 'backwardInput', 'backwardWeight'] as const).map(
  (entryPoint) => ({
    kernel: SHORT_CONV_KERNEL,
    entryPoint,
    constants: { WG },
  }),
);

export interface ShortConvShape {
  /** B · T rows of C channels; row r sits at position r % T. */
  rows: number;
  T: number;
  C: number;
  /** Taps. */
  K: number;
}

function check(label: string, s: ShortConvShape, slices: Record<string, [BufferSlice, number]>) {
  checkDims(label, { rows: s.rows, T: s.T, C: s.C, K: s.K });
  checkSlices(label, slices);
}

const params = (s: ShortConvShape, accumulate = false) => ({ P: { rows: s.rows, T: s.T, C: s.C, K: s.K, accumulate: accumulate ? 1 : 0 } });

/** forward and backwardInput: one invocation per (row, channel), reading w and one [rows, C] tensor, writing another. */
function perElementDispatch(
  gpu: GpuContext,
  entry: 'forward' | 'backwardInput',
  label: string,
  a: ShortConvShape & { w: BufferSlice },
  [inName, input]: [string, BufferSlice],
  [outName, output]: [string, BufferSlice],
): Promise<Dispatch> {
  const n = a.rows * a.C;
  check(label, a, { w: [a.w, a.C * a.K], [inName]: [input, n], [outName]: [output, n] });
  const storage = { w: a.w, [inName]: input, [outName]: output } as never;
  return kernelDispatch(gpu, SHORT_CONV_KERNEL, entry, { uniforms: params(a), storage, constants: { WG }, label }, grid1d(ceilDiv(n, WG)));
}

/** out [rows, C] = the convolution of x [rows, C] with w [C, K]. */
export async function shortConvForwardDispatch(
  gpu: GpuContext,
  a: ShortConvShape & { w: BufferSlice; x: BufferSlice; out: BufferSlice },
): Promise<Dispatch> {
  return perElementDispatch(gpu, 'forward', 'short_conv', a, ['x', a.x], ['out', a.out]);
}

/** dx [rows, C] = the gradient of the input from dout [rows, C] (overwritten). */
export async function shortConvBackwardInputDispatch(
  gpu: GpuContext,
  a: ShortConvShape & { w: BufferSlice; dout: BufferSlice; dx: BufferSlice },
): Promise<Dispatch> {
  return perElementDispatch(gpu, 'backwardInput', 'short_conv.dx', a, ['dout', a.dout], ['dx', a.dx]);
}

/** dw [C, K] = (or += with accumulate) the weight gradient from dout and the input x. */
export async function shortConvBackwardWeightDispatch(
  gpu: GpuContext,
  a: ShortConvShape & { dout: BufferSlice; x: BufferSlice; dw: BufferSlice; accumulate: boolean },
): Promise<Dispatch> {
  const n = a.rows * a.C;
  check('short_conv.dw', a, { dout: [a.dout, n], x: [a.x, n], dw: [a.dw, a.C * a.K] });
  return kernelDispatch(
    gpu,
    SHORT_CONV_KERNEL,
    'backwardWeight',
    { uniforms: params(a, a.accumulate), storage: { dw: a.dw, dout: a.dout, convIn: a.x }, constants: { WG }, label: 'short_conv.dw' },
    grid1d(a.C * a.K),
  );
}
