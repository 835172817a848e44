// Wrapper for shaders/embedding.wgsl.
import code from '../../shaders/embedding.wgsl?raw';
import { checkDims, checkSlices } from '../gpu/checks';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { tokenIndexLength } from './embedding-index';

// Forward: one thread per output float. Backward: a workgroup per (token, tile of WG_BWD channels).
const WG_FWD = 256;
const WG_BWD = 64;
const NAN_BITS = 0x7fc00000;

export interface EmbeddingForwardArgs {
  /** i32 [N] */
  tokens: BufferSlice;
  /** [V, C]; V is read from the slice size. */
  table: BufferSlice;
  /** [N, C] */
  out: BufferSlice;
  N: number;
  C: number;
}

export interface EmbeddingBackwardArgs {
  /** i32 [3N + 2] from buildTokenIndex. */
  index: BufferSlice;
  /** [N, C] */
  dout: BufferSlice;
  /** [V, C], accumulated (+=). */
  dtable: BufferSlice;
  N: number;
  C: number;
}

/** out[n, :] = table[tokens[n], :]; a token outside [0, V) yields a NaN row. */
export async function embeddingForwardDispatch(gpu: GpuContext, a: EmbeddingForwardArgs): Promise<Dispatch> {
  const label = 'embedding.forward';
  checkDims(label, { N: a.N, C: a.C });
  const V = tableRows(label, 'table', a.table, a.C);
  checkSlices(label, { tokens: [a.tokens, a.N], table: [a.table, V * a.C], out: [a.out, a.N * a.C] });
  return gpu.dispatch(
    { code, entryPoint: 'forward', constants: { WG: WG_FWD }, label },
    [gpu.uniform([a.N, a.C, V, 0, NAN_BITS]), a.tokens, a.table, a.out],
    grid1d(ceilDiv(a.N * a.C, WG_FWD)),
  );
}

/**
 * dtable[v, :] += Σ dout[n, :] over positions n with token v, in ascending n (deterministic).
 * Launches N × ceil(C/64) workgroups; those past the batch's U distinct tokens exit at once.
 */
export async function embeddingBackwardDispatch(gpu: GpuContext, a: EmbeddingBackwardArgs): Promise<Dispatch> {
  const label = 'embedding.backward';
  checkDims(label, { N: a.N, C: a.C });
  const V = tableRows(label, 'dtable', a.dtable, a.C);
  checkSlices(label, { index: [a.index, tokenIndexLength(a.N)], dout: [a.dout, a.N * a.C], dtable: [a.dtable, V * a.C] });
  const tiles = ceilDiv(a.C, WG_BWD);
  return gpu.dispatch(
    { code, entryPoint: 'backward', constants: { WG: WG_BWD }, label },
    [gpu.uniform([a.N, a.C, V, tiles, NAN_BITS]), a.index, a.dout, a.dtable],
    grid1d(a.N * tiles),
  );
}

function tableRows(label: string, name: string, s: BufferSlice, C: number): number {
  const V = Math.floor(s.size / (4 * C));
  if (V < 1) throw new Error(`${label}: ${name} holds ${s.size} bytes, less than one row of C=${C} floats`);
  return V;
}


