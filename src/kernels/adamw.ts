// Wrapper for shaders/adamw.wgsl: AdamW step over one flat parameter range.
import code from '../../shaders/adamw.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32, type UniformSlot, type UniformWord } from '../gpu/uniforms';
import type { AdamwHyper } from '../spec/optimizer';

const WG = 256;


/**
 * The words the trainer writes into the shared per-step AdamW uniform before each submit
 * (`slot.write(adamwHyperWords(h))`). Bias corrections and 1 − β are formed in f64 and rounded
 * once, so the GPU sees the same factors as the f64 reference up to one f32 rounding each.
 */
export function adamwHyperWords(h: AdamwHyper): UniformWord[] {
  if (!Number.isInteger(h.step) || h.step < 1) throw new Error(`adamw: step = ${h.step} must be an integer ≥ 1`);
  const bc1 = 1 - h.beta1 ** h.step;
  const bc2 = 1 - h.beta2 ** h.step;
  return [
    f32(1 - h.lr * h.weightDecay),
    f32(h.beta1),
    f32(1 - h.beta1),
    f32(h.beta2),
    f32(1 - h.beta2),
    f32(h.lr / bc1),
    f32(1 / Math.sqrt(bc2)),
    f32(h.eps),
  ];
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
  if (!Number.isInteger(a.n) || a.n < 0) throw new Error(`adamw: n = ${a.n} must be a non-negative integer`);
  for (const [name, s] of [['param', a.param], ['grad', a.grad], ['m', a.m], ['v', a.v]] as const)
    if (s.size < a.n * 4) throw new Error(`adamw: ${name} holds ${s.size} bytes, n = ${a.n} needs ${a.n * 4}`);
  if (a.stats.size < 8) throw new Error(`adamw: stats holds ${a.stats.size} bytes, needs 8`);
  const bindings = [gpu.uniform([a.n, a.decay ? 1 : 0]), a.hyper, a.param, a.grad, a.m, a.v, a.stats];
  return gpu.dispatch({ code, entryPoint: 'adamw', constants: { WG }, label: 'adamw' }, bindings, grid1d(ceilDiv(a.n, WG)));
}
