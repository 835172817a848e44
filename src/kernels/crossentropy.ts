// Wrapper for shaders/crossentropy.wgsl: fused softmax cross-entropy loss and gradient.
import code from '../../shaders/crossentropy.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { rowLanes } from '../gpu/lanes';

export const CROSSENTROPY_KERNEL = defineKernel({
  name: 'crossentropy',
  files: [['crossentropy.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['N', 'u32'],
        ['V', 'u32'],
        ['gradScale', 'f32'],
      ],
    },
  },
  entries: {
    xent: [
      ['logits', 'array<f32>'],
      ['targets', 'array<i32>'],
      ['losses', 'array<f32>'],
      ['dlogits', 'array<f32>'],
    ],
    xent_inplace: [
      ['logits', 'array<f32>'],
      ['targets', 'array<i32>'],
      ['losses', 'array<f32>'],
    ],
  },
});

/** Both entry points at both lane counts rowLanes picks (hardware 256, software 8). */
export const CROSSENTROPY_VARIANTS: readonly KernelVariant[] = [256, 8].flatMap((WG) => [
  { kernel: CROSSENTROPY_KERNEL, entryPoint: 'xent', constants: { WG } },
  { kernel: CROSSENTROPY_KERNEL, entryPoint: 'xent_inplace', constants: { WG } },
]);

export interface CrossEntropyArgs {
  /** f32 [N, V]. */
  logits: BufferSlice;
  /**
   * i32 [N], each in [0, V) or IGNORE_TARGET (-1: loss 0, gradient 0). Any other target, or a NaN /
   * +Inf logit, makes that row's loss and gradient NaN.
   */
  targets: BufferSlice;
  /** f32 [N]. */
  losses: BufferSlice;
  /** f32 [N, V]; may be the very same slice as `logits` (in place). */
  dlogits: BufferSlice;
  N: number;
  V: number;
  gradScale: number;
}

/**
 * Per row n: loss[n] = logsumexp(logits[n,:]) - logits[n, target[n]];
 * dlogits[n,:] = (softmax(logits[n,:]) - onehot(target[n])) * gradScale. One workgroup per row.
 */
export async function crossEntropyDispatch(gpu: GpuContext, a: CrossEntropyArgs): Promise<Dispatch> {
  const { N, V } = a;
  const kernel = 'crossEntropy';
  checkDims(kernel, { N, V });
  if (N * V > 2 ** 32 - 1) argumentError(kernel, 'V', `N·V = ${N * V} overflows u32 indexing`);
  // dlogits may be the very same slice as logits (in place: a separate entry point without it).
  checkSlices(
    kernel,
    { logits: [a.logits, N * V], targets: [a.targets, N], losses: [a.losses, N], dlogits: [a.dlogits, N * V] },
    { inPlace: [['logits', 'dlogits']] },
  );
  const inPlace = a.logits.buffer === a.dlogits.buffer && a.logits.offset === a.dlogits.offset;
  const uniforms = { P: { N, V, gradScale: a.gradScale } };
  const constants = { WG: rowLanes(gpu, 256, 8) };
  const common = { logits: a.logits, targets: a.targets, losses: a.losses };
  return inPlace
    ? kernelDispatch(
        gpu,
        CROSSENTROPY_KERNEL,
        'xent_inplace',
        { uniforms, storage: common, constants, label: 'crossentropy.xent_inplace' },
        grid1d(N),
      )
    : kernelDispatch(
        gpu,
        CROSSENTROPY_KERNEL,
        'xent',
        { uniforms, storage: { ...common, dlogits: a.dlogits }, constants, label: 'crossentropy.xent' },
        grid1d(N),
      );
}
