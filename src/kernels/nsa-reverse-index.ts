// Wrapper for shaders/nsa_reverse_index.wgsl: the reverse index of the NSA selection (for each
// (b, g, block j) the ascending queries t that selected j), built on the GPU by count, prefix-sum
// and fill. The selected branch's dK/dV pass loops over it (src/kernels/nsa-attention.ts).
import code from '../../shaders/nsa_reverse_index.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { numSelBlocks } from '../spec/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../spec/nsa-config';
import type { AttentionShape } from '../spec/shapes';

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
  for (const f of ['B', 'T', 'H', 'G', 'dk', 'dv'] as const) {
    if (!Number.isInteger(a[f]) || a[f] < 1) throw new Error(`${label}: ${f} = ${a[f]} must be an integer ≥ 1`);
  }
  assertNsaConfig(cfg, { T, H: a.H, G, dk: a.dk, dv: a.dv });
  const nB = numSelBlocks(T, cfg);
  const n = nsaReverseIndexLengths(a, cfg);
  const need: [string, BufferSlice, number][] = [
    ['sel', a.sel, B * T * G * cfg.nSel],
    ['reverse.counts', a.reverse.counts, n.counts],
    ['reverse.offsets', a.reverse.offsets, n.offsets],
    ['reverse.queries', a.reverse.queries, n.queries],
  ];
  for (const [name, slice, elems] of need) {
    if (slice.size < elems * 4) throw new Error(`${label}: ${name} holds ${slice.size} bytes; needs ${elems * 4}`);
  }
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (nB > max || G > max || B > max) throw new Error(`${label}: grid (${nB}, ${G}, ${B}) exceeds ${max} workgroups per dimension`);
  const u = gpu.uniform([T, G, cfg.nSel, cfg.lSel, nB, n.counts]);
  const { counts, offsets, queries } = a.reverse;
  return [
    await gpu.dispatch({ code, entryPoint: 'countQueries', label: `${label}.count` }, [u, a.sel, counts], [nB, G, B]),
    await gpu.dispatch({ code, entryPoint: 'scanCounts', label: `${label}.scan` }, [u, counts, offsets, queries], [1]),
    await gpu.dispatch({ code, entryPoint: 'fillQueries', label: `${label}.fill` }, [u, a.sel, queries], [nB, G, B]),
  ];
}
