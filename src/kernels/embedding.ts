// Wrapper for shaders/embedding.wgsl.
import code from '../../shaders/embedding.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import { argumentError } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { tokenIndexLength } from './embedding-index';

// Forward: one thread per output float. Backward: a workgroup per (token, tile of WG_BWD channels).
const WG_FWD = 256;
const WG_BWD = 64;
const NAN_BITS = 0x7fc00000;

export const EMBEDDING_KERNEL = defineKernel({
  name: 'embedding',
  files: [['embedding.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['N', 'u32'],
        ['C', 'u32'],
        ['V', 'u32', 'rows in the table (from its slice size): a token outside [0, V) is a bug upstream'],
        ['tiles', 'u32', 'channel tiles per token (backward)'],
        ['nanBits', 'u32', '0x7fc00000: the forward writes this NaN for an out-of-range token'],
      ],
    },
  },
  // forward: ids = tokens, src = table, dst = out; backward: ids = index, src = dout, dst = dtable.
  entries: {
    forward: [
      ['ids', 'array<i32>'],
      ['src', 'array<f32>'],
      ['dst', 'array<f32>'],
    ],
    backward: [
      ['ids', 'array<i32>'],
      ['src', 'array<f32>'],
      ['dst', 'array<f32>'],
    ],
  },
});

export const EMBEDDING_VARIANTS: readonly KernelVariant[] = [
  { kernel: EMBEDDING_KERNEL, entryPoint: 'forward', constants: { WG: WG_FWD } },
  { kernel: EMBEDDING_KERNEL, entryPoint: 'backward', constants: { WG: WG_BWD } },
];

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
  return kernelDispatch(
    gpu,
    EMBEDDING_KERNEL,
    'forward',
    {
      uniforms: { P: { N: a.N, C: a.C, V, tiles: 0, nanBits: NAN_BITS } },
      storage: { ids: a.tokens, src: a.table, dst: a.out },
      constants: { WG: WG_FWD },
      label,
    },
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
  return kernelDispatch(
    gpu,
    EMBEDDING_KERNEL,
    'backward',
    {
      uniforms: { P: { N: a.N, C: a.C, V, tiles, nanBits: NAN_BITS } },
      storage: { ids: a.index, src: a.dout, dst: a.dtable },
      constants: { WG: WG_BWD },
      label,
    },
    grid1d(a.N * tiles),
  );
}

function tableRows(label: string, name: string, s: BufferSlice, C: number): number {
  const V = Math.floor(s.size / (4 * C));
  if (V < 1) argumentError(label, name, `${name} holds ${s.size} bytes, less than one row of C=${C} floats`);
  return V;
}
