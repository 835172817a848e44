// Wrapper for shaders/nsa_reverse_index.wgsl (with shaders/sel_lower_bound.wgsl): the reverse index of the NSA selection (for each
// (b, g, block j) the ascending queries t that selected j), built on the GPU by count, prefix-sum
// and fill. The selected branch's dK/dV pass loops over it (src/kernels/nsa-attention.ts).
import code from '../../shaders/nsa_reverse_index.wgsl?raw';
import lowerBoundCode from '../../shaders/sel_lower_bound.wgsl?raw';
import { numSelBlocks } from '../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../definitions/nsa-config';
import type { AttentionShape } from '../definitions/shapes';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { defineKernel, kernelDispatch, kernelUniform, type KernelVariant } from '../gpu/kernel-interface';

const I = 'array<i32>';
export const NSA_REVERSE_INDEX_KERNEL = defineKernel({
  name: 'nsa_reverse_index',
  files: [
    ['sel_lower_bound.wgsl', lowerBoundCode],
    ['nsa_reverse_index.wgsl', code],
  ],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['G', 'u32'],
        ['nSel', 'u32'],
        ['lSel', 'u32'],
        ['nB', 'u32', 'selection blocks per sequence'],
        ['R', 'u32', 'B·G·nB'],
      ],
    },
  },
  entries: {
    countQueries: [
      ['sel', I],
      ['counts', I],
    ],
    scanCounts: [
      ['countsIn', I],
      ['offsets', I],
      ['head', I],
    ],
    fillQueries: [
      ['sel', I],
      ['queries', I],
    ],
  },
});

export const NSA_REVERSE_INDEX_VARIANTS: readonly KernelVariant[] = Object.keys(NSA_REVERSE_INDEX_KERNEL.spec.entries).map(
  (entryPoint) => ({
    kernel: NSA_REVERSE_INDEX_KERNEL,
    entryPoint,
  }),
);

/**
 * int32 slices; r = (b·G + g)·nB + j with nB = numSelBlocks(T).
 * - counts [R]: queries of (b, g, j).
 * - offsets [R + 1]: exclusive prefix sum of counts over r (offsets[R] = total).
 * - queries: a copy of offsets in its first R + 1 elements (so a kernel binds the whole index as one
 *   storage buffer), then the lists: those of (b, g, j) are queries[R + 1 + offsets[r] ..
 *   R + 1 + offsets[r + 1]), ascending. Per sequence this is selectionReverseIndex's layout with
 *   offsets shifted by those of the earlier sequences.
 */
export interface NsaReverseIndexSlices {
  counts: BufferSlice;
  offsets: BufferSlice;
  queries: BufferSlice;
}

/** Element counts (int32) of the reverse-index slices; queries is sized for the fullest selection. */
export function nsaReverseIndexLengths(s: AttentionShape, cfg: NsaConfig): { counts: number; offsets: number; queries: number } {
  const nB = numSelBlocks(s.T, cfg);
  const R = s.B * s.G * nB;
  return { counts: R, offsets: R + 1, queries: R + 1 + s.B * s.T * s.G * Math.min(cfg.nSel, nB) };
}

/** Three dispatches (count, scan, fill) that rebuild `reverse` from `sel` [B,T,G,nSel]. */
export async function nsaReverseIndexDispatches(
  gpu: GpuContext,
  a: AttentionShape & { cfg: NsaConfig; sel: BufferSlice; reverse: NsaReverseIndexSlices },
): Promise<Dispatch[]> {
  const { B, T, G, cfg } = a;
  const label = 'nsa.reverseIndex';
  checkDims(label, { B, T, H: a.H, G, dk: a.dk, dv: a.dv });
  assertNsaConfig(cfg, { T, H: a.H, G, dk: a.dk, dv: a.dv });
  const nB = numSelBlocks(T, cfg);
  const n = nsaReverseIndexLengths(a, cfg);
  checkSlices(label, {
    sel: [a.sel, B * T * G * cfg.nSel],
    'reverse.counts': [a.reverse.counts, n.counts],
    'reverse.offsets': [a.reverse.offsets, n.offsets],
    'reverse.queries': [a.reverse.queries, n.queries],
  });
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (nB > max || G > max || B > max) argumentError(label, 'T', `grid (${nB}, ${G}, ${B}) exceeds ${max} workgroups per dimension`);
  const K = NSA_REVERSE_INDEX_KERNEL;
  const u = kernelUniform(gpu, K, 'P', { T, G, nSel: cfg.nSel, lSel: cfg.lSel, nB, R: n.counts });
  const { counts, offsets, queries } = a.reverse;
  return [
    await kernelDispatch(gpu, K, 'countQueries', { uniforms: { P: u }, storage: { sel: a.sel, counts }, label: `${label}.count` }, [
      nB,
      G,
      B,
    ]),
    await kernelDispatch(
      gpu,
      K,
      'scanCounts',
      { uniforms: { P: u }, storage: { countsIn: counts, offsets, head: queries }, label: `${label}.scan` },
      [1],
    ),
    await kernelDispatch(gpu, K, 'fillQueries', { uniforms: { P: u }, storage: { sel: a.sel, queries }, label: `${label}.fill` }, [
      nB,
      G,
      B,
    ]),
  ];
}
