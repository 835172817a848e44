// Wrapper for shaders/crossentropy.wgsl: fused softmax cross-entropy loss and gradient.
import code from '../../shaders/crossentropy.wgsl?raw';
import { rowLanes } from '../gpu/lanes';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { grid1d } from '../gpu/grid';
import { f32 } from '../gpu/uniforms';


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

const sameRange = (a: BufferSlice, b: BufferSlice) => a.buffer === b.buffer && a.offset === b.offset;
const overlap = (a: BufferSlice, b: BufferSlice) =>
  a.buffer === b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;

/**
 * Per row n: loss[n] = logsumexp(logits[n,:]) - logits[n, target[n]];
 * dlogits[n,:] = (softmax(logits[n,:]) - onehot(target[n])) * gradScale. One workgroup per row.
 */
export async function crossEntropyDispatch(gpu: GpuContext, a: CrossEntropyArgs): Promise<Dispatch> {
  const { N, V } = a;
  if (!Number.isInteger(N) || N < 1 || !Number.isInteger(V) || V < 1) throw new Error(`crossEntropy: N = ${N}, V = ${V} must be positive integers`);
  if (N * V > 2 ** 32 - 1) throw new Error(`crossEntropy: N·V = ${N * V} overflows u32 indexing`);
  const need = (s: BufferSlice, bytes: number, name: string) => {
    if (s.size < bytes) throw new Error(`crossEntropy: ${name} holds ${s.size} bytes, needs ${bytes}`);
  };
  need(a.logits, N * V * 4, 'logits');
  need(a.dlogits, N * V * 4, 'dlogits');
  need(a.targets, N * 4, 'targets');
  need(a.losses, N * 4, 'losses');
  const inPlace = sameRange(a.logits, a.dlogits);
  if (!inPlace && overlap(a.logits, a.dlogits)) throw new Error('crossEntropy: dlogits partly overlaps logits (same slice or disjoint only)');
  const uniform = gpu.uniform([N, V, f32(a.gradScale)]);
  const bindings = inPlace ? [uniform, a.logits, a.targets, a.losses] : [uniform, a.logits, a.targets, a.losses, a.dlogits];
  const entryPoint = inPlace ? 'xent_inplace' : 'xent';
  return gpu.dispatch({ code, entryPoint, constants: { WG: rowLanes(gpu, 256, 8) }, label: `crossentropy.${entryPoint}` }, bindings, grid1d(N));
}
