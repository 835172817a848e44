// Wrappers for the GPU decode shaders (shaders/decode_*.wgsl): one new query per sequence, B
// sequences in lockstep at the position held in a small state buffer (st[0] = t), so every
// dispatch is built once and a token costs one writeBuffer, one submit and one readback.
// The kernels share one uniform (DECODE_PARAMS); a dispatch fills the fields it uses.
import attendCode from '../../shaders/decode_attend.wgsl?raw';
import commonCode from '../../shaders/decode_common.wgsl?raw';
import dsaCode from '../../shaders/decode_dsa.wgsl?raw';
import matvecCode from '../../shaders/decode_matvec.wgsl?raw';
import rowsCode from '../../shaders/decode_rows.wgsl?raw';
import selectCode from '../../shaders/decode_select.wgsl?raw';
import selectRowsCode from '../../shaders/decode_select_rows.wgsl?raw';
import selectSplitCode from '../../shaders/decode_select_split.wgsl?raw';
import topkRowCode from '../../shaders/dsa_topk_row.wgsl?raw';
import scoreRowCode from '../../shaders/nsa_score_row.wgsl?raw';
import topnCode from '../../shaders/nsa_topn.wgsl?raw';
import topnGroupCode from '../../shaders/nsa_topn_group.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkMax, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant, type UniformValues } from '../gpu/kernel-interface';
import { rowLanes } from '../gpu/lanes';
import { type NsaAttnVariant, nsaAttnVariant } from './nsa-attention';
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
    ['rslot', 'u32', 'where this layer’s read counts start (DSA topKAt: its indexer read counts)'],
    ['K', 'u32', 'matvec: inner size; convK: taps'],
    ['N', 'u32', 'matvec: outputs per row'],
    ['flags', 'u32', 'matvec: 1 W stored [N, K], 2 accumulate'],
    ['D', 'u32', 'compress: vector width; convK: channels G·dk'],
    ['Dh', 'u32', 'compress: MLP hidden width'],
    ['half', 'u32', 'ropeQ: dk / 2'],
    ['total', 'u32', 'invocations that do work'],
    ['splits', 'u32', 'attend: key chunks per (b, head); DSA indexScoresAt: token chunks per b'],
    ['scale', 'f32', '1 / √dk'],
    ['HI', 'u32', 'DSA: indexer heads H_I'],
    ['dI', 'u32', 'DSA: indexer head width d_I'],
    ['topK', 'u32', 'DSA: tokens selected, k'],
    ['iscale', 'f32', 'DSA: 1 / √(H_I·d_I)'],
    ['members', 'u32', 'matvec: products in a group (0: one product)'],
    ['tab', 'u32', 'matvec: word of st where the group’s table starts'],
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
    convK: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
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

/** One KV set of a grouped append: its new k [B, G, dk] and v [B, G, dv], its caches [B, rows, G, ·]. */
export interface AppendSet {
  k: BufferSlice;
  v: BufferSlice;
  kCache: BufferSlice;
  vCache: BufferSlice;
  rows: number;
}

/** Words of st a grouped append of `sets` KV sets uses for its table. */
export const appendTableWords = (sets: number): number => 5 * sets;

/**
 * The new token's k (rotated to t) and v of several KV sets into their caches in one dispatch
 * (decode_rows.wgsl's appendKV with P.members = sets): the new k's, v's, K caches and V caches are
 * bound as one span each (they must not alias one another), each set's rows and offsets found
 * through a table written into st at word `tab` here, once. P carries B, G, dk, dv.
 */
export function appendKVGroupDispatch(
  gpu: GpuContext,
  st: BufferSlice,
  tab: number,
  P0: DecodeParams,
  rope: BufferSlice,
  sets: readonly AppendSet[],
  label: string,
): Promise<Dispatch> {
  try {
    const S = sets.length;
    checkDims(label, { sets: S, tab: tab + 1, B: P0.B, G: P0.G, dk: P0.dk, dv: P0.dv });
    const k = span(
      label,
      'new keys',
      sets.map((x) => x.k),
    );
    const v = span(
      label,
      'new values',
      sets.map((x) => x.v),
    );
    const kc = span(
      label,
      'key caches',
      sets.map((x) => x.kCache),
    );
    const vc = span(
      label,
      'value caches',
      sets.map((x) => x.vCache),
    );
    const bg = P0.B * P0.G;
    sets.forEach((x, s) => {
      checkDims(label, { [`rows${s}`]: x.rows });
      checkSlices(label, {
        [`k${s}`]: [x.k, bg * P0.dk],
        [`v${s}`]: [x.v, bg * P0.dv],
        [`kCache${s}`]: [x.kCache, bg * x.rows * P0.dk],
        [`vCache${s}`]: [x.vCache, bg * x.rows * P0.dv],
      });
    });
    checkSlices(label, { st: [st, tab + appendTableWords(S)], rope: [rope, 0], k: [k, 0], v: [v, 0], kCache: [kc, 0], vCache: [vc, 0] });
    const table = new Uint32Array(appendTableWords(S));
    sets.forEach((x, s) =>
      table.set(
        [
          x.rows,
          (x.k.offset - k.offset) / 4,
          (x.v.offset - v.offset) / 4,
          (x.kCache.offset - kc.offset) / 4,
          (x.vCache.offset - vc.offset) / 4,
        ],
        5 * s,
      ),
    );
    gpu.write(st, table, 4 * tab);
    const P = { ...P0, members: S, tab, total: S * bg * (P0.dk + P0.dv) };
    return decodeRowsDispatch(gpu, 'appendKV', st, P, { a: rope, b: k, c: v, d: kc, e_: vc }, label);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The matrix-vector products split over K (decode_matvec.wgsl). */
export const DECODE_MATVEC_KERNEL = defineKernel({
  name: 'decode.matvec',
  files: [COMMON, ['decode_matvec.wgsl', matvecCode]],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    matvecPart: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
      ['c', F],
    ],
    matvecCombine: [
      ['st', 'array<u32>'],
      ['a', F],
      ['b', F],
    ],
  },
});

/** The selection on software adapters: one invocation per (b, g) (decode_select.wgsl). */
export const DECODE_SELECT_KERNEL = defineKernel({
  name: 'decode.select',
  files: [
    COMMON,
    ['nsa_topn.wgsl', topnCode],
    ['nsa_score_row.wgsl', scoreRowCode],
    ['decode_select_rows.wgsl', selectRowsCode],
    ['decode_select.wgsl', selectCode],
  ],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    selectTopSerial: [
      ['st', 'array<u32>'],
      ['q', F],
      ['kc', F],
      ['pCmp', F],
      ['scores', F],
      ['sel', 'array<i32>'],
    ],
  },
});

/**
 * The selection on GPUs, split over many workgroups (decode_select_split.wgsl): the dot products,
 * each head's softmax, the block scores and top-n (the workgroup's topnSelectGroup,
 * nsa_topn_group.wgsl: the scan's selection, its picks an argmax over the lanes). pCmp is the attention scratch [B, H, cap]: s_k,
 * then each head's p_cmp.
 */
export const DECODE_SELECT_SPLIT_KERNEL = defineKernel({
  name: 'decode.selectSplit',
  files: [
    COMMON,
    ['nsa_topn.wgsl', topnCode],
    ['nsa_topn_group.wgsl', topnGroupCode],
    ['nsa_score_row.wgsl', scoreRowCode],
    ['decode_select_rows.wgsl', selectRowsCode],
    ['decode_select_split.wgsl', selectSplitCode],
  ],
  uniforms: { P: DECODE_PARAMS },
  // pCmp first in every entry point: a name keeps one binding index in all of them (kernelHeader).
  entries: {
    selectDots: [
      ['st', 'array<u32>'],
      ['pCmp', F],
      ['q', F],
      ['kc', F],
    ],
    selectSoftmax: [
      ['st', 'array<u32>'],
      ['pCmp', F],
    ],
    selectBlocks: [
      ['st', 'array<u32>'],
      ['pCmp', F],
      ['scores', F],
      ['sel', 'array<i32>'],
    ],
  },
});

/** Lanes of a selectDots workgroup (the override DOTS_WG of decode_select_split.wgsl): a warp. */
export const SELECT_DOTS_WG = 32;

/** attendPart and attendCombine share st and part at the same binding indices. */
export const DECODE_ATTEND_KERNEL = defineKernel({
  name: 'decode.attend',
  files: [COMMON, ['decode_attend.wgsl', attendCode]],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    attendPart: [
      ['st', 'array<u32>'],
      ['part', F],
      ['q', F],
      ['k', F],
      ['v', F],
      ['scratch', F],
      ['sel', 'array<i32>'],
    ],
    attendCombine: [
      ['st', 'array<u32>'],
      ['part', F],
      ['out', F],
      ['reads', 'array<u32>'],
    ],
  },
});

/** DSA's indexer at the new query: its key cache, scores and top-k (decode_dsa.wgsl on dsa_topk_row.wgsl). */
export const DECODE_DSA_KERNEL = defineKernel({
  name: 'decode.dsa',
  files: [
    ['dsa_topk_row.wgsl', topkRowCode],
    ['decode_dsa.wgsl', dsaCode],
  ],
  uniforms: { P: DECODE_PARAMS },
  entries: {
    appendIndexKey: [
      ['st', 'array<u32>'],
      ['kI', F],
      ['kNew', F],
    ],
    indexScoresAt: [
      ['st', 'array<u32>'],
      ['kI', F],
      ['scores', F],
      ['cnt', 'array<u32>'],
      ['qI', F],
      ['wI', F],
    ],
    topKAt: [
      ['st', 'array<u32>'],
      ['sel', 'array<i32>'],
      ['scores', F],
      ['cnt', 'array<u32>'],
      ['ireads', 'array<u32>'],
    ],
  },
});

export const DECODE_VARIANTS: readonly KernelVariant[] = [
  ...Object.keys(DECODE_ROWS_KERNEL.spec.entries).map((entryPoint) => ({ kernel: DECODE_ROWS_KERNEL, entryPoint })),
  { kernel: DECODE_MATVEC_KERNEL, entryPoint: 'matvecPart' },
  { kernel: DECODE_MATVEC_KERNEL, entryPoint: 'matvecCombine' },
  { kernel: DECODE_SELECT_KERNEL, entryPoint: 'selectTopSerial', constants: { SR_CH: 64 } },
  ...Object.keys(DECODE_SELECT_SPLIT_KERNEL.spec.entries).map((entryPoint) => ({
    kernel: DECODE_SELECT_SPLIT_KERNEL,
    entryPoint,
    constants: { SR_CH: 64, DOTS_WG: SELECT_DOTS_WG },
  })),
  { kernel: DECODE_ATTEND_KERNEL, entryPoint: 'attendPart' },
  { kernel: DECODE_ATTEND_KERNEL, entryPoint: 'attendCombine' },
  ...[64, 1].flatMap((WG) =>
    Object.keys(DECODE_DSA_KERNEL.spec.entries).map((entryPoint) => ({ kernel: DECODE_DSA_KERNEL, entryPoint, constants: { WG } })),
  ),
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
  /** Chunks of K (matvecSplits; default 1: one invocation per output over all K). */
  splits?: number;
  /** With splits > 1: the partial sums [splits, rows, N] (matvecPartialsLength floats). */
  part?: BufferSlice;
  label: string;
}

/** Workgroups the split products aim for at one row (as ATTEND_TARGET_WORKGROUPS). */
export const MATVEC_TARGET_WORKGROUPS = 1024;
/** Fewest inputs a chunk of K is cut to. */
export const MATVEC_MIN_CHUNK = 4;
/**
 * Most chunks: the combine adds them serially per output, so a narrow product (a 128-wide key
 * projection) cut finer would spend longer combining than the chunks save.
 */
export const MATVEC_MAX_SPLITS = 64;

/**
 * Chunks of K for an N-output product: enough for ceil(N / 64)·splits to reach
 * MATVEC_TARGET_WORKGROUPS, chunks of at least MATVEC_MIN_CHUNK inputs, at most MATVEC_MAX_SPLITS
 * (1 when the outputs alone fill it).
 */
export function matvecSplits(K: number, N: number): number {
  const fill = Math.ceil(MATVEC_TARGET_WORKGROUPS / ceilDiv(N, WG));
  return Math.max(1, Math.min(fill, Math.floor(K / MATVEC_MIN_CHUNK), MATVEC_MAX_SPLITS));
}

/** Floats of a split product's partial sums. */
export function matvecPartialsLength(rows: number, N: number, splits: number): number {
  return splits > 1 ? splits * rows * N : 0;
}

/**
 * out[r, n] (+)= Σ_k x[r, k] · W[k, n]. One chunk: one invocation per output, k ascending
 * (decode_rows.wgsl's matvec). More: matvecPart, one workgroup per (64 outputs, chunk of K), then
 * matvecCombine adds the chunks in order (decode_matvec.wgsl).
 */
export function matvecDispatch(gpu: GpuContext, a: MatvecArgs): Promise<Dispatch[]> {
  const flags = (a.transW ? 1 : 0) | (a.accumulate ? 2 : 0);
  const splits = a.splits ?? 1;
  if (!(Number.isInteger(splits) && splits >= 1))
    return Promise.reject(new RangeError(`${a.label}: splits must be an integer ≥ 1 (got ${splits})`));
  const P = decodeParams({}, { K: a.K, N: a.N, flags, total: a.rows * a.N, splits });
  if (splits === 1) return Promise.all([decodeRowsDispatch(gpu, 'matvec', a.st, P, { a: a.x, b: a.W, c: a.out }, a.label)]);
  const need = 4 * matvecPartialsLength(a.rows, a.N, splits);
  if (!a.part || a.part.size < need)
    return Promise.reject(new RangeError(`${a.label}: the partials slice holds ${a.part?.size ?? 0} bytes; ${need} needed`));
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  return Promise.all([
    kernelDispatch(
      gpu,
      DECODE_MATVEC_KERNEL,
      'matvecPart',
      { uniforms: { P }, storage: { st: a.st, a: a.x, b: a.W, c: a.part }, label: `${a.label} part` },
      grid1d(ceilDiv(a.N, WG) * splits, max),
    ),
    kernelDispatch(
      gpu,
      DECODE_MATVEC_KERNEL,
      'matvecCombine',
      { uniforms: { P }, storage: { st: a.st, a: a.part, b: a.out }, label: `${a.label} combine` },
      grid1d(ceilDiv(a.rows * a.N, WG), max),
    ),
  ]);
}

/** One product of a group: out [rows, N] = x · W, W stored [K, N] (no out in a gated group). */
export interface MatvecMember {
  W: BufferSlice;
  out?: BufferSlice;
  N: number;
}

export interface MatvecGroupArgs {
  /** The state tensor: word 0 is t; the group's table goes in words tab … tab + 4·members − 1. */
  st: BufferSlice;
  tab: number;
  x: BufferSlice;
  rows: number;
  K: number;
  /** The products, all W in one buffer and all outputs in another (bound as one span each). */
  members: readonly MatvecMember[];
  /** Chunks of K (matvecSplits of K and the members' N summed). */
  splits: number;
  /** The partial sums [splits, rows, Σ N] (matvecGroupPartialsLength floats). */
  part: BufferSlice;
  /**
   * Two members of equal N (w1, w3): the combine writes gated [rows, N] = silu(x·W_0) · (x·W_1),
   * the SwiGLU folded in, instead of the members' outputs.
   */
  gated?: BufferSlice;
  label: string;
}

/** Words of st a group of `members` products uses for its table. */
export const matvecGroupTableWords = (members: number): number => 4 * members;

/** Floats of a group's partial sums (stored even with one chunk). */
export function matvecGroupPartialsLength(rows: number, N: number, splits: number): number {
  return splits * rows * N;
}

/** The one slice from the first to the end of the last of `slices` (all in one buffer). */
function span(label: string, what: string, slices: readonly BufferSlice[]): BufferSlice {
  const buffer = slices[0].buffer;
  if (slices.some((s) => s.buffer !== buffer)) throw new RangeError(`${label}: the members' ${what} are not in one buffer`);
  const offset = Math.min(...slices.map((s) => s.offset));
  const end = Math.max(...slices.map((s) => s.offset + s.size));
  return { buffer, offset, size: Math.ceil((end - offset) / 4) * 4 };
}

/**
 * Several products of one input in one part + combine (decode_matvec.wgsl with P.members > 0):
 * out_j[r, n] = Σ_k x[r, k] · W_j[k, n] for every member j, their outputs numbered one after another
 * (N = Σ N_j) and cut over K as one product of N outputs, so each output's chunks and order are
 * those matvecDispatch gives it with the same splits. The table (each member's first output, N_j
 * and where its W and out start in the bound spans) is written into st here, once.
 */
export function matvecGroupDispatch(gpu: GpuContext, a: MatvecGroupArgs): Promise<Dispatch[]> {
  try {
    const M = a.members.length;
    checkDims(a.label, { rows: a.rows, K: a.K, members: M, splits: a.splits, tab: a.tab + 1 });
    const N = a.members.reduce((s, m) => s + m.N, 0);
    const Wspan = span(
      a.label,
      'weights',
      a.members.map((m) => m.W),
    );
    const gated = a.gated;
    if (gated && !(M === 2 && a.members[0].N === a.members[1].N))
      throw new RangeError(`${a.label}: a gated group is two products of equal N (got ${a.members.map((m) => m.N).join(', ')})`);
    // Each member's W and out hold their tensors, the outputs do not overlap one another, and the
    // spans bound do not alias st, x or the partials.
    if (gated) checkSlices(a.label, { gated: [gated, a.rows * a.members[0].N] });
    else checkSlices(a.label, Object.fromEntries(a.members.map((m, j) => [`out${j}`, [m.out, a.rows * m.N]])));
    const outSpan =
      gated ??
      span(
        a.label,
        'outputs',
        a.members.map((m) => m.out as BufferSlice),
      );
    a.members.forEach((m, j) => checkSlices(a.label, { [`W${j}`]: [m.W, a.K * m.N] }));
    checkSlices(a.label, {
      st: [a.st, a.tab + matvecGroupTableWords(M)],
      x: [a.x, a.rows * a.K],
      part: [a.part, matvecGroupPartialsLength(a.rows, N, a.splits)],
      weights: [Wspan, 0],
      outputs: [outSpan, 0],
    });
    const table = new Uint32Array(matvecGroupTableWords(M));
    let first = 0;
    a.members.forEach((m, j) => {
      table.set([first, m.N, (m.W.offset - Wspan.offset) / 4, ((m.out ?? outSpan).offset - outSpan.offset) / 4], 4 * j);
      first += m.N;
    });
    gpu.write(a.st, table, 4 * a.tab);
    const P = decodeParams({}, { K: a.K, N, flags: gated ? 4 : 0, total: a.rows * N, splits: a.splits, members: M, tab: a.tab });
    const max = gpu.limits.maxComputeWorkgroupsPerDimension;
    return Promise.all([
      kernelDispatch(
        gpu,
        DECODE_MATVEC_KERNEL,
        'matvecPart',
        { uniforms: { P }, storage: { st: a.st, a: a.x, b: Wspan, c: a.part }, label: `${a.label} part` },
        grid1d(ceilDiv(N, WG) * a.splits, max),
      ),
      kernelDispatch(
        gpu,
        DECODE_MATVEC_KERNEL,
        'matvecCombine',
        { uniforms: { P }, storage: { st: a.st, a: a.part, b: outSpan }, label: `${a.label} combine` },
        grid1d(ceilDiv(a.rows * (gated ? a.members[0].N : N), WG), max),
      ),
    ]);
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * The selection's tensors: q [B, H, dk], kc [B, Nmax, G, dk], the attention scratch [B, H, cap],
 * scores [B, G, nBmax], sel (i32).
 */
export interface DecodeSelectSlices {
  st: BufferSlice;
  q: BufferSlice;
  kc: BufferSlice;
  scratch: BufferSlice;
  scores: BufferSlice;
  sel: BufferSlice;
}

/**
 * Top-n selection of the new query of every (b, g) into sel[P.slot …], the heads' compressed-
 * attention probabilities left in their rows of the attention scratch [B, H, cap], where the
 * compressed branch's attend dispatch (next) takes them as their weights. Variant as the training
 * kernel's on this adapter (nsa-select.ts), or as asked: 'simple', one invocation per (b, g)
 * (selectTopSerial: scoreRowSerial); 'group', three dispatches over many workgroups
 * (decode_select_split.wgsl: scoreRow's arithmetic split) — the dot products, one invocation per
 * (b, head, visible compressed block), SELECT_DOTS_WG a workgroup, sized for Nmax; each head's
 * softmax, one workgroup per (b, head); the block scores and top-n, one workgroup per (b, g), its
 * lanes taking the top-n's picks together (nsa_topn_group.wgsl: the scan's selection). Same
 * bits either way. Nothing is allocated: p_cmp's scratch rows hold the dot products first.
 */
export function decodeSelectDispatches(
  gpu: GpuContext,
  P: DecodeParams,
  s: DecodeSelectSlices,
  label: string,
  variant?: NsaAttnVariant,
): Promise<Dispatch[]> {
  try {
    checkDims(label, { B: P.B, H: P.H, G: P.G, hpg: P.hpg, dk: P.dk, cap: P.cap, Nmax: P.Nmax, nBmax: P.nBmax, nSel: P.nSel });
    if (P.H !== P.G * P.hpg) argumentError(label, 'hpg', `H = ${P.H} must be G·hpg = ${P.G}·${P.hpg}`);
    checkMax(label, 'Nmax', P.Nmax, P.cap, '(the scratch rows hold cap blocks)');
    checkSlices(label, {
      st: [s.st, 1],
      q: [s.q, P.B * P.H * P.dk],
      kc: [s.kc, P.B * P.Nmax * P.G * P.dk],
      scratch: [s.scratch, P.B * P.H * P.cap],
      scores: [s.scores, P.B * P.G * P.nBmax],
      sel: [s.sel, P.slot + P.B * P.G * P.nSel],
    });
  } catch (e) {
    return Promise.reject(e);
  }
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const constants = { SR_CH: scoreRowChunk(P.Nmax) };
  if (nsaAttnVariant(gpu, variant) === 'simple')
    return Promise.all([
      kernelDispatch(
        gpu,
        DECODE_SELECT_KERNEL,
        'selectTopSerial',
        { uniforms: { P }, storage: { st: s.st, q: s.q, kc: s.kc, pCmp: s.scratch, scores: s.scores, sel: s.sel }, constants, label },
        grid1d(P.B * P.G, max),
      ),
    ]);
  const K = DECODE_SELECT_SPLIT_KERNEL;
  const pCmp = s.scratch;
  const split = { ...constants, DOTS_WG: SELECT_DOTS_WG };
  return Promise.all([
    kernelDispatch(
      gpu,
      K,
      'selectDots',
      { uniforms: { P }, storage: { st: s.st, pCmp, q: s.q, kc: s.kc }, constants: split, label: `${label} dots` },
      grid1d(ceilDiv(P.B * P.H * P.Nmax, SELECT_DOTS_WG), max),
    ),
    kernelDispatch(
      gpu,
      K,
      'selectSoftmax',
      { uniforms: { P }, storage: { st: s.st, pCmp }, constants: split, label: `${label} softmax` },
      grid1d(P.B * P.H, max),
    ),
    kernelDispatch(
      gpu,
      K,
      'selectBlocks',
      { uniforms: { P }, storage: { st: s.st, pCmp, scores: s.scores, sel: s.sel }, constants: split, label: `${label} blocks` },
      grid1d(P.B * P.G, max),
    ),
  ]);
}

/**
 * Workgroups the split attention aims for: 4 × the SMs of the largest GPU npm run gpu:plan knows
 * (H100: 132) with room, so a decode step at batch 1 fills it (docs/gpu.md).
 */
export const ATTEND_TARGET_WORKGROUPS = 1024;
/** Fewest keys a chunk is cut to (below this a chunk's fixed cost dominates). */
export const ATTEND_MIN_CHUNK = 8;

/**
 * Key chunks per (b, head) for a branch of at most `maxKeys` keys: enough for B·H·splits to reach
 * ATTEND_TARGET_WORKGROUPS, but chunks of at least ATTEND_MIN_CHUNK keys (1 when B·H alone fills it).
 */
export function attendSplits(B: number, H: number, maxKeys: number): number {
  return Math.max(1, Math.min(Math.ceil(ATTEND_TARGET_WORKGROUPS / (B * H)), Math.ceil(maxKeys / ATTEND_MIN_CHUNK)));
}

/** Floats of the attention partials for B·H·splits chunks of dv columns: (m, l, keys read, acc[dv]) each. */
export function attendPartialsLength(B: number, H: number, splits: number, dv: number): number {
  return B * H * splits * (dv + 3);
}

/**
 * Attention of the new query of every (b, head) over branch P.branch's keys, split in P.splits
 * chunks of consecutive keys (flash-decoding): attendPart, one workgroup per (b, head, chunk),
 * writes each chunk's (max, sum, acc) to `part`; attendCombine, one invocation per output, merges
 * them in chunk order into `out` and writes the keys read.
 */
export async function decodeAttendDispatches(
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
    part: BufferSlice;
  },
  label: string,
): Promise<Dispatch[]> {
  if (!(Number.isInteger(P.splits) && P.splits >= 1)) throw new RangeError(`${label}: splits must be an integer ≥ 1 (got ${P.splits})`);
  const need = 4 * attendPartialsLength(P.B, P.H, P.splits, P.dv);
  if (s.part.size < need) throw new RangeError(`${label}: the partials slice holds ${s.part.size} bytes; ${need} needed`);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  return Promise.all([
    kernelDispatch(
      gpu,
      DECODE_ATTEND_KERNEL,
      'attendPart',
      {
        uniforms: { P },
        storage: { st: s.st, part: s.part, q: s.q, k: s.k, v: s.v, scratch: s.scratch, sel: s.sel },
        label: `${label} part`,
      },
      grid1d(P.B * P.H * P.splits, max),
    ),
    kernelDispatch(
      gpu,
      DECODE_ATTEND_KERNEL,
      'attendCombine',
      { uniforms: { P }, storage: { st: s.st, part: s.part, out: s.out, reads: s.reads }, label: `${label} combine` },
      grid1d(ceilDiv(P.B * P.H * P.dv, WG), max),
    ),
  ]);
}

/** Lanes of the DSA decode kernels: 64 on a GPU, 1 on software adapters (slow barriers), as dsa-topk.ts. */
export function decodeDsaLanes(gpu: GpuContext): 64 | 1 {
  return rowLanes(gpu, 64, 1) === 1 ? 1 : 64;
}

/** Token chunks per sequence of indexScoresAt (the counts it leaves, per sequence). */
export const decodeIndexChunks = (cap: number, lanes: number): number => ceilDiv(cap, lanes);

export interface DecodeDsaSlices {
  st: BufferSlice;
  /** Rotated indexer queries [B, H_I, d_I]. */
  qI: BufferSlice;
  /** Head weights [B, H_I]. */
  wI: BufferSlice;
  /** The new token's rotated indexer key [B, d_I]. */
  kNew: BufferSlice;
  /** The layer's indexer key cache [B, cap, d_I]. */
  kI: BufferSlice;
  /** Index scores [B, cap] (scratch: row b holds tokens 0 … t). */
  scores: BufferSlice;
  /** Per (b, chunk) indexer rows read, u32 [B, decodeIndexChunks] (scratch). */
  cnt: BufferSlice;
  /** Selections int32: the layer's rows [B, G, k] from P.slot. */
  sel: BufferSlice;
  /** Indexer rows read u32: the layer's [B] from P.rslot. */
  ireads: BufferSlice;
}

/**
 * The indexer's part of a DSA decode step for the new query of every sequence, in order:
 * appendIndexKey (kNew into row t of the cache), indexScoresAt (scores of tokens 0 … t and the
 * rows read per chunk), topKAt (the counts into ireads[P.rslot + b], the top-k into
 * sel[P.slot + (b·G + g)·k + ·]). P carries B, G, cap, HI, dI, topK, iscale, slot and rslot;
 * `lanes` (64 or 1) defaults by adapter (decodeDsaLanes).
 */
export async function decodeDsaDispatches(
  gpu: GpuContext,
  P: DecodeParams,
  s: DecodeDsaSlices,
  label: string,
  lanes: 64 | 1 = decodeDsaLanes(gpu),
): Promise<Dispatch[]> {
  checkDims(label, { B: P.B, G: P.G, cap: P.cap, HI: P.HI, dI: P.dI, topK: P.topK });
  const chunks = decodeIndexChunks(P.cap, lanes);
  checkSlices(label, {
    st: [s.st, 1],
    qI: [s.qI, P.B * P.HI * P.dI],
    wI: [s.wI, P.B * P.HI],
    kNew: [s.kNew, P.B * P.dI],
    kI: [s.kI, P.B * P.cap * P.dI],
    scores: [s.scores, P.B * P.cap],
    cnt: [s.cnt, P.B * chunks],
    sel: [s.sel, P.slot + P.B * P.G * P.topK],
    ireads: [s.ireads, P.rslot + P.B],
  });
  const Pd = { ...P, splits: chunks };
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const constants = { WG: lanes };
  return Promise.all([
    kernelDispatch(
      gpu,
      DECODE_DSA_KERNEL,
      'appendIndexKey',
      { uniforms: { P: Pd }, storage: { st: s.st, kNew: s.kNew, kI: s.kI }, constants, label: `${label} append kI` },
      grid1d(ceilDiv(P.B * P.dI, lanes), max),
    ),
    kernelDispatch(
      gpu,
      DECODE_DSA_KERNEL,
      'indexScoresAt',
      {
        uniforms: { P: Pd },
        storage: { st: s.st, qI: s.qI, wI: s.wI, kI: s.kI, scores: s.scores, cnt: s.cnt },
        constants,
        label: `${label} index scores`,
      },
      grid1d(P.B * chunks, max),
    ),
    kernelDispatch(
      gpu,
      DECODE_DSA_KERNEL,
      'topKAt',
      {
        uniforms: { P: Pd },
        storage: { st: s.st, scores: s.scores, cnt: s.cnt, sel: s.sel, ireads: s.ireads },
        constants,
        label: `${label} top-k`,
      },
      grid1d(P.B, max),
    ),
  ]);
}
