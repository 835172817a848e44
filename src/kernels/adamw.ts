// Wrapper for shaders/adamw.wgsl: AdamW step over one flat parameter range.
import code from '../../shaders/adamw.wgsl?raw';
import type { AdamwHyper } from '../definitions/optimizer';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant, uniformWords } from '../gpu/kernel-interface';
import type { UniformSlot, UniformWord } from '../gpu/uniforms';

const WG = 256;

export const ADAMW_KERNEL = defineKernel({
  name: 'adamw',
  files: [['adamw.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['n', 'u32'],
        ['decay', 'u32'],
      ],
    },
    H: {
      struct: 'Hyper',
      fields: [
        ['decayMul', 'f32', '1 − lr·wd'],
        ['beta1', 'f32'],
        ['oneMinusBeta1', 'f32'],
        ['beta2', 'f32'],
        ['oneMinusBeta2', 'f32'],
        ['stepSize', 'f32', 'lr / (1 − β1ᵗ)'],
        ['invSqrtBc2', 'f32', '1 / sqrt(1 − β2ᵗ)'],
        ['eps', 'f32'],
      ],
    },
  },
  entries: {
    adamw: [
      ['param', 'array<f32>'],
      ['grad', 'array<f32>'],
      ['m', 'array<f32>'],
      ['v', 'array<f32>'],
      ['stats', 'array<f32>'],
    ],
  },
});

export const ADAMW_VARIANTS: readonly KernelVariant[] = [{ kernel: ADAMW_KERNEL, entryPoint: 'adamw', constants: { WG } }];

/**
 * The words the trainer writes into the shared per-step AdamW uniform before each submit
 * (`slot.write(adamwHyperWords(h))`). Bias corrections and 1 − β are formed in f64 and rounded
 * once, so the GPU sees the same factors as the f64 reference up to one f32 rounding each.
 */
export function adamwHyperWords(h: AdamwHyper): UniformWord[] {
  if (!Number.isInteger(h.step) || h.step < 1) argumentError('adamw', 'step', `step = ${h.step} must be an integer ≥ 1`);
  const bc1 = 1 - h.beta1 ** h.step;
  const bc2 = 1 - h.beta2 ** h.step;
  return uniformWords(ADAMW_KERNEL.spec.uniforms.H, {
    decayMul: 1 - h.lr * h.weightDecay,
    beta1: h.beta1,
    oneMinusBeta1: 1 - h.beta1,
    beta2: h.beta2,
    oneMinusBeta2: 1 - h.beta2,
    stepSize: h.lr / bc1,
    invSqrtBc2: 1 / Math.sqrt(bc2),
    eps: h.eps,
  });
}

export interface AdamwArgs {
  param: BufferSlice;
  grad: BufferSlice;
  m: BufferSlice;
  v: BufferSlice;
  n: number;
  /** Apply weight decay (false for biases, norms, ...). */
  decay: boolean;
  /** Shared per-step uniform holding adamwHyperWords(...). */
  hyper: UniformSlot;
  /** f32 [2] from gradNormDispatches: norm, clip scale. */
  stats: BufferSlice;
}

/** One AdamW step on n floats; p, m, v untouched when stats[0] is NaN/Inf. */
export async function adamwDispatch(gpu: GpuContext, a: AdamwArgs): Promise<Dispatch> {
  const label = 'adamw';
  const { n } = a;
  checkDims(label, { n }, { n: 0 });
  checkSlices(label, { param: [a.param, n], grad: [a.grad, n], m: [a.m, n], v: [a.v, n], stats: [a.stats, 2] });
  return kernelDispatch(
    gpu,
    ADAMW_KERNEL,
    'adamw',
    {
      uniforms: { P: { n, decay: a.decay ? 1 : 0 }, H: a.hyper },
      storage: { param: a.param, grad: a.grad, m: a.m, v: a.v, stats: a.stats },
      constants: { WG },
      label,
    },
    grid1d(ceilDiv(n, WG)),
  );
}
