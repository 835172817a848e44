// Wrappers for the GPU decode shaders (shaders/decode_*.wgsl): one new query per sequence, B
// sequences in lockstep at the position held in a small state buffer (st[0] = t), so every
// dispatch is built once and a token costs one writeBuffer, one submit and one readback.
// The kernels share one uniform (DECODE_PARAMS); a dispatch fills the fields it uses.
import attendCode from '../../shaders/decode_attend.wgsl?raw';
import commonCode from '../../shaders/decode_common.wgsl?raw';
import rowsCode from '../../shaders/decode_rows.wgsl?raw';
import selectCode from '../../shaders/decode_select.wgsl?raw';
import scoreRowCode from '../../shaders/nsa_score_row.wgsl?raw';
import topnCode from '../../shaders/nsa_topn.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant, type UniformValues } from '../gpu/kernel-interface';
import { nsaAttnVariant } from './nsa-attention';
import { scoreRowChunk } from './nsa-select';

const WG = 64;

const DECODE_PARAMS = {
  struct: 'Params',
  fields: [
    ['B', 'u32', 'sequences decoded together'],
    ['H', 'u32'],
    ['G', 'u32'],
    ['hpg', 'u32', 'heads per group'],
    ['dk', 'u32'],
    ['dv', 'u32'],
    ['cap', 'u32', 'positions the decoder holds (scratch rows per head)'],
    ['rows', 'u32', 'rows of the cache bound: cap, w (window ring) or Nmax (compressed)'],
    ['Nmax', 'u32', 'compressed blocks at capacity'],
    ['nBmax', 'u32', 'selection blocks at capacity'],
    ['l', 'u32'],
    ['d', 'u32'],
    ['lSel', 'u32'],
    ['nSel', 'u32'],
    ['w', 'u32'],
    ['forceInit', 'u32'],
    ['forceLocal', 'u32'],
    ['branch', 'u32', 'attend: CMP 0, SEL 1, WIN 2, FULL 3'],
    ['slot', 'u32', 'where this layer’s selection rows start'],
    ['rslot', 'u32', 'where this layer’s read counts start'],
    ['K', 'u32', 'matvec: inner size'],
    ['N', 'u32', 'matvec: outputs per row'],
    ['flags', 'u32', 'matvec: 1 W stored [N, K], 2 accumulate'],
    ['D', 'u32', 'compress: vector width'],
    ['Dh', 'u32', 'compress: MLP hidden width'],
    ['half', 'u32', 'ropeQ: dk / 2'],
    ['total', 'u32', 'invocations that do work'],
    ['scale', 'f32', '1 / √dk'],
  ],
} as const;

export type DecodeParams = UniformValues<typeof DECODE_PARAMS>;

const F = 'array<f32>';
const COMMON = ['decode_common.wgsl', commonCode] as const;

export const DECODE_ROWS_KERNEL = defineKernel({
  name: 'decode.rows',
  files: [COMMON, ['decode_rows.wgsl', rowsCode]],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    matvec: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
    ],
    ropeQ: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
    ],
    appendKV: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
      ['d', F],
      ['e_', F],
    ],
    compressAvg: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
    ],
    compressHidden: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
      ['d', F],
      ['e_', F],
    ],
    compressOut: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
      ['d', F],
    ],
  },
});

/** selectTop and its software twin selectTopSerial bind the same buffers. */
const SELECT_BINDINGS = [
  ['st', 'array<u32>'],
  ['q', F],
  ['kc', F],
  ['scratch', F],
  ['scores', F],
  ['sel', 'array<i32>'],
] as const;

export const DECODE_SELECT_KERNEL = defineKernel({
  name: 'decode.select',
  files: [COMMON, ['nsa_topn.wgsl', topnCode], ['nsa_score_row.wgsl', scoreRowCode], ['decode_select.wgsl', selectCode]],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    selectTop: SELECT_BINDINGS,
    selectTopSerial: SELECT_BINDINGS,
  },
});

export const DECODE_ATTEND_KERNEL = defineKernel({
  name: 'decode.attend',
  files: [COMMON, ['decode_attend.wgsl', attendCode]],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    attend: [
      ['st', 'array<u32>'],
      ['q', F],
      ['k', F],
      ['v', F],
      ['out', F],
      ['scratch', F],
      ['sel', 'array<i32>'],
      ['reads', 'array<u32>'],
    ],
  },
});

export const DECODE_VARIANTS: readonly KernelVariant[] = [
  ...Object.keys(DECODE_ROWS_KERNEL.spec.entries).map((entryPoint) => ({ kernel: DECODE_ROWS_KERNEL, entryPoint })),
  { kernel: DECODE_SELECT_KERNEL, entryPoint: 'selectTop', constants: { SR_CH: 64 } },
  { kernel: DECODE_SELECT_KERNEL, entryPoint: 'selectTopSerial', constants: { SR_CH: 64 } },
  { kernel: DECODE_ATTEND_KERNEL, entryPoint: 'attend' },
];

const ZERO: DecodeParams = Object.fromEntries(DECODE_PARAMS.fields.map((f) => [f[0], 0])) as DecodeParams;

/** The uniform of one decode dispatch: the model-wide fields plus this dispatch's own. */
export function decodeParams(base: Partial<DecodeParams>, own: Partial<DecodeParams>): DecodeParams {
  return { ...ZERO, ...base, ...own };
}

type RowsEntry = keyof typeof DECODE_ROWS_KERNEL.spec.entries;
type RowsStorage = Partial<Record<'a' | 'b' | 'c' | 'd' | 'e_', BufferSlice>>;

/** One per-element dispatch of decode_rows.wgsl over P.total invocations. */
export function decodeRowsDispatch(
  gpu: GpuContext,
  entry: RowsEntry,
  st: BufferSlice,
  P: DecodeParams,
  storage: RowsStorage,
  label: string,
): Promise<Dispatch> {
  return kernelDispatch(
    gpu,
    DECODE_ROWS_KERNEL,
    entry,
    { uniforms: { P }, storage: { st, ...storage } as never, label },
    grid1d(ceilDiv(P.total, WG), gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}

export interface MatvecArgs {
  st: BufferSlice;
  x: BufferSlice;
  W: BufferSlice;
  out: BufferSlice;
  rows: number;
  K: number;
  N: number;
  /** W stored [N, K] (the tied LM head) instead of [K, N]. */
  transW?: boolean;
  /** out += x·W instead of out = x·W (the residual adds). */
  accumulate?: boolean;
  label: string;
}

/** out[r, n] (+)= Σ_k x[r, k] · W[k, n], one invocation per output, k ascending. */
export function matvecDispatch(gpu: GpuContext, a: MatvecArgs): Promise<Dispatch> {
  const flags = (a.transW ? 1 : 0) | (a.accumulate ? 2 : 0);
  return decodeRowsDispatch(
    gpu,
    'matvec',
    a.st,
    decodeParams({}, { K: a.K, N: a.N, flags, total: a.rows * a.N }),
    { a: a.x, b: a.W, c: a.out },
    a.label,
  );
}

/**
 * Top-n selection of the new query of every (b, g) into sel[P.slot …]; one workgroup each, the
 * heads' compressed-attention probabilities in their rows of the attention scratch [B, H, cap],
 * where the compressed branch's attend dispatch (next) takes them as its weights.
 */
export function decodeSelectDispatch(
  gpu: GpuContext,
  P: DecodeParams,
  s: { st: BufferSlice; q: BufferSlice; kc: BufferSlice; scratch: BufferSlice; scores: BufferSlice; sel: BufferSlice },
  label: string,
): Promise<Dispatch> {
  return kernelDispatch(
    gpu,
    DECODE_SELECT_KERNEL,
    // As the training kernel on this adapter (nsa-select.ts): the same score function in both.
    nsaAttnVariant(gpu) === 'simple' ? 'selectTopSerial' : 'selectTop',
    { uniforms: { P }, storage: s, constants: { SR_CH: scoreRowChunk(P.Nmax) }, label },
    grid1d(P.B * P.G, gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}

/** Attention of the new query of every (b, head) over branch P.branch's keys; one workgroup each. */
export function decodeAttendDispatch(
  gpu: GpuContext,
  P: DecodeParams,
  s: {
    st: BufferSlice;
    q: BufferSlice;
    k: BufferSlice;
    v: BufferSlice;
    out: BufferSlice;
    scratch: BufferSlice;
    sel: BufferSlice;
    reads: BufferSlice;
  },
  label: string,
): Promise<Dispatch> {
  return kernelDispatch(
    gpu,
    DECODE_ATTEND_KERNEL,
    'attend',
    { uniforms: { P }, storage: s, label },
    grid1d(P.B * P.H, gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}
