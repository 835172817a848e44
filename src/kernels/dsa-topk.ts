// Wrapper for shaders/dsa_topk.wgsl: DSA token top-k (docs/dsa-spec.md section 3), a radix select
// per query row of scores [B, T, T] into sel int32 [B, T, G, k] (ascending, −1 padded, the same
// row for every group). Integer counts only: 64 lanes (GPU) and 1 lane (software adapter) give
// the same selection.
import code from '../../shaders/dsa_topk.wgsl?raw';
import rowCode from '../../shaders/dsa_topk_row.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { rowLanes } from '../gpu/lanes';
import { checkDsaShape, type DsaKernelShape } from './dsa-index-scores';

export const DSA_TOPK_KERNEL = defineKernel({
  name: 'dsa_topk',
  files: [
    ['dsa_topk_row.wgsl', rowCode],
    ['dsa_topk.wgsl', code],
  ],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['G', 'u32'],
        ['topK', 'u32', 'k'],
        ['rows', 'u32', 'B·T'],
      ],
    },
  },
  entries: {
    topK: [
      ['scores', 'array<f32>'],
      ['sel', 'array<i32>'],
    ],
  },
});

export const DSA_TOPK_VARIANTS: readonly KernelVariant[] = [64, 1].map((WG) => ({
  kernel: DSA_TOPK_KERNEL,
  entryPoint: 'topK',
  constants: { WG },
}));

/** sel [B, T, G, k] from scores [B, T, T]. `lanes` (64 or 1) defaults by adapter. */
export async function dsaTopKDispatch(
  gpu: GpuContext,
  a: DsaKernelShape & { scores: BufferSlice; sel: BufferSlice; lanes?: 64 | 1 },
): Promise<Dispatch> {
  const label = 'dsa.topK';
  checkDsaShape(label, a);
  const { B, T, G, cfg } = a;
  checkSlices(label, { scores: [a.scores, B * T * T], sel: [a.sel, B * T * G * cfg.topK] });
  const WG = a.lanes ?? rowLanes(gpu, 64, 1);
  return kernelDispatch(
    gpu,
    DSA_TOPK_KERNEL,
    'topK',
    { uniforms: { P: { T, G, topK: cfg.topK, rows: B * T } }, storage: { scores: a.scores, sel: a.sel }, constants: { WG }, label },
    grid1d(B * T, gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}
