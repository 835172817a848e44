// The lightning indexer's projections on the GPU (docs/dsa-spec.md section 6): from the layer's
// normed input x [N, C], qI = RoPE(x·WqI) [N, H_I, d_I], kI = RoPE(x·WkI) [N, d_I], wI = x·WwI
// [N, H_I]; and the parameter gradients dW = xᵀ·(un-rotated dqI / dkI, dwI). x gets no gradient
// from the indexer: its input is detached. Row r sits at position r % T (RoPE restarts per sequence).
import type { DsaConfig } from '../../definitions/dsa-config';
import type { BufferSlice } from '../../gpu/arena';
import type { Dispatch, GpuContext } from '../../gpu/context';
import { matmulDispatch } from '../../kernels/matmul';
import { ropeDispatch } from '../../kernels/rope';

/** WqI [C, H_I·d_I], WkI [C, d_I], WwI [C, H_I] (or their gradients). */
export interface IndexerWeightSlices {
  wqI: BufferSlice;
  wkI: BufferSlice;
  wwI: BufferSlice;
}

export interface IndexerRowsArgs {
  /** B·T rows. */
  N: number;
  T: number;
  C: number;
  cfg: DsaConfig;
  /** RoPE's theta; undefined: no positional rotation (posEncoding 'none'). */
  ropeTheta?: number;
  /** The layer's normed input [N, C]. */
  x: BufferSlice;
}

/** qI, kI, wI from x (overwritten). */
export async function indexerProjectDispatches(
  gpu: GpuContext,
  a: IndexerRowsArgs & { W: IndexerWeightSlices; qI: BufferSlice; kI: BufferSlice; wI: BufferSlice },
): Promise<Dispatch[]> {
  const { N, T, C, cfg } = a;
  const { indexHeads: HI, indexDim: dI } = cfg;
  const list: Promise<Dispatch>[] = [
    matmulDispatch(gpu, { a: a.x, b: a.W.wqI, c: a.qI, M: N, N: HI * dI, K: C, label: 'dsa.index.q' }),
    matmulDispatch(gpu, { a: a.x, b: a.W.wkI, c: a.kI, M: N, N: dI, K: C, label: 'dsa.index.k' }),
    matmulDispatch(gpu, { a: a.x, b: a.W.wwI, c: a.wI, M: N, N: HI, K: C, label: 'dsa.index.w' }),
  ];
  if (a.ropeTheta !== undefined) {
    const rope = { rows: N, T, headDim: dI, theta: a.ropeTheta, inverse: false };
    list.push(ropeDispatch(gpu, { ...rope, x: a.qI, out: a.qI, heads: HI }), ropeDispatch(gpu, { ...rope, x: a.kI, out: a.kI, heads: 1 }));
  }
  return Promise.all(list);
}

/**
 * dWqI, dWkI, dWwI (+)= xᵀ·(…) from dqI, dkI (un-rotated in place: they are consumed) and dwI.
 * accumulate: add into the gradients (micro-batches) instead of overwriting them.
 */
export async function indexerParamGradDispatches(
  gpu: GpuContext,
  a: IndexerRowsArgs & { dqI: BufferSlice; dkI: BufferSlice; dwI: BufferSlice; grads: IndexerWeightSlices; accumulate: boolean },
): Promise<Dispatch[]> {
  const { N, T, C, cfg } = a;
  const { indexHeads: HI, indexDim: dI } = cfg;
  const list: Promise<Dispatch>[] = [];
  if (a.ropeTheta !== undefined) {
    const rope = { rows: N, T, headDim: dI, theta: a.ropeTheta, inverse: true };
    list.push(
      ropeDispatch(gpu, { ...rope, x: a.dqI, out: a.dqI, heads: HI }),
      ropeDispatch(gpu, { ...rope, x: a.dkI, out: a.dkI, heads: 1 }),
    );
  }
  const acc = { transA: true, accumulate: a.accumulate, M: C, K: N };
  list.push(
    matmulDispatch(gpu, { ...acc, a: a.x, b: a.dqI, c: a.grads.wqI, N: HI * dI, label: 'dsa.index.dwq' }),
    matmulDispatch(gpu, { ...acc, a: a.x, b: a.dkI, c: a.grads.wkI, N: dI, label: 'dsa.index.dwk' }),
    matmulDispatch(gpu, { ...acc, a: a.x, b: a.dwI, c: a.grads.wwI, N: HI, label: 'dsa.index.dww' }),
  );
  return Promise.all(list);
}
