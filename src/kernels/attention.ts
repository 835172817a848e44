// Wrapper for shaders/attention_fwd.wgsl, attention_bwd_dq.wgsl and attention_bwd_dkdv.wgsl:
// dense causal attention with grouped-query heads (flash style, deterministic backward). WGSL has
// no #include: each kernel is its shared parts (attention_common.wgsl with the NSA kernels, the
// query-row tiles of forward and dQ, the key-outer dK/dV of attention_keys.wgsl) concatenated
// here in front of the kernel's own file, after the header generated from the declarations below
// (the dense uniform and the bindings).
import bwdCommonCode from '../../shaders/attention_bwd_common.wgsl?raw';
import dkdvCode from '../../shaders/attention_bwd_dkdv.wgsl?raw';
import dqCode from '../../shaders/attention_bwd_dq.wgsl?raw';
import commonCode from '../../shaders/attention_common.wgsl?raw';
import log2Code from '../../shaders/attention_dense_log2.wgsl?raw';
import denseRowsCode from '../../shaders/attention_dense_rows.wgsl?raw';
import fwdCode from '../../shaders/attention_fwd.wgsl?raw';
import keysCode from '../../shaders/attention_keys.wgsl?raw';
import rowsDqCode from '../../shaders/attention_rows_dq.wgsl?raw';
import sumHeadsCode from '../../shaders/attention_sum_heads.wgsl?raw';
import type { AttentionShape } from '../definitions/shapes';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkMax, checkSlices, type SliceArg } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import {
  defineKernel,
  kernelDispatch,
  kernelUniform,
  type KernelVariant,
  type StorageDecl,
  type UniformValues,
} from '../gpu/kernel-interface';

/** The uniform of the three dense kernels: S = T key rows per sequence; head i belongs to group floor(i / hpg). */
const DENSE_PARAMS = {
  struct: 'Params',
  fields: [
    ['T', 'u32'],
    ['H', 'u32'],
    ['G', 'u32'],
    ['hpg', 'u32', 'heads per group, H / G'],
    ['S', 'u32', 'key rows per sequence (= T; attention_dense_rows.wgsl, shared with NSA, reads S)'],
    ['scaleLog2e', 'f32', 'log2(e) / sqrt(DK)'],
    ['scale', 'f32', '1 / sqrt(DK)'],
  ],
} as const;

const F = 'array<f32>';
/** q, k, v at bindings 1–3 (attention_common.wgsl); the backward's lse, dout, delta at 4–6 (attention_bwd_common.wgsl). */
export const ATTENTION_QKV = [
  ['q', F],
  ['k', F],
  ['v', F],
] as const satisfies readonly StorageDecl[];
export const ATTENTION_BWD = [...ATTENTION_QKV, ['lse', F], ['dout', F], ['delta', F]] as const satisfies readonly StorageDecl[];

export const ATTENTION_FORWARD_KERNEL = defineKernel({
  name: 'attention.forward',
  files: [
    ['attention_common.wgsl', commonCode],
    ['attention_dense_rows.wgsl', denseRowsCode],
    ['attention_fwd.wgsl', fwdCode],
  ],
  uniforms: { P: DENSE_PARAMS },
  entries: { forward: [...ATTENTION_QKV, ['out', F], ['lse', F]] },
});

export const ATTENTION_DQ_KERNEL = defineKernel({
  name: 'attention.backward.dq',
  files: [
    ['attention_common.wgsl', commonCode],
    ['attention_bwd_common.wgsl', bwdCommonCode],
    ['attention_dense_rows.wgsl', denseRowsCode],
    ['attention_dense_log2.wgsl', log2Code],
    ['attention_rows_dq.wgsl', rowsDqCode],
    ['attention_bwd_dq.wgsl', dqCode],
  ],
  uniforms: { P: DENSE_PARAMS },
  entries: { backwardDq: [...ATTENTION_BWD, ['gradQ', F], ['out', F]] },
});

export const ATTENTION_DKDV_KERNEL = defineKernel({
  name: 'attention.backward.dkdv',
  files: [
    ['attention_common.wgsl', commonCode],
    ['attention_bwd_common.wgsl', bwdCommonCode],
    ['attention_dense_log2.wgsl', log2Code],
    ['attention_keys.wgsl', keysCode],
    ['attention_bwd_dkdv.wgsl', dkdvCode],
  ],
  uniforms: { P: DENSE_PARAMS },
  entries: {
    backwardDkDv: [...ATTENTION_BWD, ['gradK', F], ['gradV', F]],
    // gradK, gradV hold the per-head parts [B,T,G,hpg,·] here (attention_bwd_dkdv.wgsl).
    backwardDkDvSplit: [...ATTENTION_BWD, ['gradK', F], ['gradV', F]],
  },
});

export const ATTENTION_SUM_HEADS_KERNEL = defineKernel({
  name: 'attention.backward.sum_heads',
  files: [['attention_sum_heads.wgsl', sumHeadsCode]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['rows', 'u32', 'key rows B·T·G'],
        ['hpg', 'u32', 'heads per group'],
        ['dk', 'u32'],
        ['dv', 'u32'],
      ],
    },
  },
  entries: {
    sumHeads: [
      ['partK', F],
      ['partV', F],
      ['gradK', F],
      ['gradV', F],
    ],
  },
});

/** Rows (forward, dQ; WG in attention_dense_rows.wgsl) or key slices (dK/dV: NS·KB) per workgroup. */
const WG = 64;
/** Workgroup memory budget per kernel (the portable WebGPU minimum). */
const SHARED_FLOATS = 16384 / 4;
/** Largest head dim: the shaders keep up to 32 vec4 of a row in registers. */
export const ATTENTION_MAX_HEAD_DIM = 128;

export interface AttentionTiling {
  DK4: number;
  DV4: number;
  /** Keys per staged K/V tile (forward, dQ): a multiple of 8 (the forward's rescale chunk), at most 64. */
  BK: number;
  /** Threads per key in dK/dV, each owning KC4 (VC4) vec4 columns of k (v). */
  NS: number;
  KC4: number;
  VC4: number;
  /** Query rows per staged tile in dK/dV. */
  BQ: number;
}

/** Tile sizes for head dims dk, dv so that every kernel stays within 16 KiB of workgroup memory. */
export function attentionTiling(dk: number, dv: number): AttentionTiling {
  const DK4 = Math.ceil(dk / 4);
  const DV4 = Math.ceil(dv / 4);
  // ks + vs: BK·(DK4 + DV4) vec4.
  const BK = Math.min(64, Math.floor(SHARED_FLOATS / 4 / (DK4 + DV4) / 8) * 8);
  const NS = [1, 2, 4].find((n) => Math.ceil(DK4 / n) <= 8 && Math.ceil(DV4 / n) <= 8) ?? 4;
  const KC4 = Math.ceil(DK4 / NS);
  const VC4 = Math.ceil(DV4 / NS);
  // qs + dos: BQ·NS·(KC4 + VC4) vec4; rowT, rowLse, rowDelta: 3·BQ; partS, partD: 2·BQ·WG floats
  // (allocated only when NS > 1; counted always). At most 16: the row loops unroll, and longer ones
  // mostly cost compile time.
  const BQ = Math.min(16, Math.floor(SHARED_FLOATS / (4 * NS * (KC4 + VC4) + 3 + 2 * WG)));
  return { DK4, DV4, BK, NS, KC4, VC4, BQ };
}

/** Representative pipelines (head dims 16, 64, 128) for the compile-all test. */
export const ATTENTION_VARIANTS: readonly KernelVariant[] = [16, 64, 128]
  .flatMap((d): KernelVariant[] => {
    const t = attentionTiling(d, d);
    const rows = { DK: d, DV: d, DK4: t.DK4, DV4: t.DV4, BK: t.BK };
    return [
      { kernel: ATTENTION_FORWARD_KERNEL, entryPoint: 'forward', constants: rows },
      { kernel: ATTENTION_DQ_KERNEL, entryPoint: 'backwardDq', constants: rows },
      { kernel: ATTENTION_DKDV_KERNEL, entryPoint: 'backwardDkDv', constants: dkdvConstants(d, d, t) },
      // The head split's entry differs from backwardDkDv only in its head range: one head dim.
      ...(d === 64 ? [{ kernel: ATTENTION_DKDV_KERNEL, entryPoint: 'backwardDkDvSplit', constants: dkdvConstants(d, d, t) }] : []),
    ];
  })
  .concat([{ kernel: ATTENTION_SUM_HEADS_KERNEL, entryPoint: 'sumHeads' }]);

function dkdvConstants(dk: number, dv: number, t: AttentionTiling): Record<string, number> {
  return { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, NS: t.NS, KB: WG / t.NS, KC4: t.KC4, VC4: t.VC4, BQ: t.BQ };
}

type Slices<N extends string> = { [K in N]: BufferSlice };

/**
 * Rejects bad shapes, short or misaligned slices and overlapping slices (every binding is
 * read_write and the kernels write out/lse, resp. delta and the gradients: no in-place use),
 * naming the field, before any GPU work.
 */
function validate(gpu: GpuContext, label: string, a: AttentionShape, need: Record<string, SliceArg>): void {
  checkDims(label, { B: a.B, T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  if (a.H % a.G !== 0) argumentError(label, 'G', `H = ${a.H} must be a multiple of G = ${a.G}`);
  checkMax(label, 'dk', a.dk, ATTENTION_MAX_HEAD_DIM);
  checkMax(label, 'dv', a.dv, ATTENTION_MAX_HEAD_DIM);
  checkSlices(label, need);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const rows = a.T * (a.H / a.G);
  if (ceilDiv(rows, WG) > max) argumentError(label, 'T', `T·H/G = ${rows} needs more than ${max} workgroups`);
  checkMax(label, 'G', a.G, max, 'workgroups');
  checkMax(label, 'B', a.B, max, 'workgroups');
}

function uniformValues(s: AttentionShape): UniformValues<typeof DENSE_PARAMS> {
  const scale = 1 / Math.sqrt(s.dk);
  return { T: s.T, H: s.H, G: s.G, hpg: s.H / s.G, S: s.T, scaleLog2e: scale * Math.LOG2E, scale };
}

/** out [B,T,H,dv] and lse [B,H,T] (natural log) of causal softmax(q kᵀ / √dk) v. */
export async function attentionForwardDispatch(
  gpu: GpuContext,
  a: AttentionShape & Slices<'q' | 'k' | 'v' | 'out' | 'lse'>,
): Promise<Dispatch> {
  const { B, T, H, G, dk, dv } = a;
  const nq = B * T * H;
  const nk = B * T * G;
  validate(gpu, 'attention.forward', a, {
    q: [a.q, nq * dk],
    k: [a.k, nk * dk],
    v: [a.v, nk * dv],
    out: [a.out, nq * dv],
    lse: [a.lse, B * H * T],
  });
  const t = attentionTiling(dk, dv);
  return kernelDispatch(
    gpu,
    ATTENTION_FORWARD_KERNEL,
    'forward',
    {
      uniforms: { P: uniformValues(a) },
      storage: { q: a.q, k: a.k, v: a.v, out: a.out, lse: a.lse },
      constants: { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, BK: t.BK },
      label: 'attention.forward',
    },
    [ceilDiv(T * (H / G), WG), G, B],
  );
}

/**
 * Backward of attentionForwardDispatch: gradQ, gradK, gradV are overwritten; delta is scratch
 * f32 [B,H,T] (rowsum(dout ∘ out), written by the first dispatch, read by the second).
 * headParts (scratch [B,T,H,dk] and [B,T,H,dv]), with H > G: dK/dV run one workgroup per head
 * instead of per group (H/G times the workgroups; a GPU with B = 1 and two groups was mostly idle)
 * and a third dispatch adds the heads' parts in a fixed order. Same result to f32 rounding, a
 * different order of additions, so the plans either always pass it or never.
 */
export async function attentionBackwardDispatches(
  gpu: GpuContext,
  a: AttentionShape &
    Slices<'q' | 'k' | 'v' | 'out' | 'lse' | 'dout' | 'delta' | 'gradQ' | 'gradK' | 'gradV'> & {
      headParts?: { k: BufferSlice; v: BufferSlice };
    },
): Promise<Dispatch[]> {
  const { B, T, H, G, dk, dv } = a;
  const nq = B * T * H;
  const nk = B * T * G;
  validate(gpu, 'attention.backward', a, {
    q: [a.q, nq * dk],
    k: [a.k, nk * dk],
    v: [a.v, nk * dv],
    out: [a.out, nq * dv],
    lse: [a.lse, B * H * T],
    dout: [a.dout, nq * dv],
    delta: [a.delta, B * H * T],
    gradQ: [a.gradQ, nq * dk],
    gradK: [a.gradK, nk * dk],
    gradV: [a.gradV, nk * dv],
  });
  const t = attentionTiling(dk, dv);
  const u = kernelUniform(gpu, ATTENTION_DQ_KERNEL, 'P', uniformValues(a));
  const bwd = { q: a.q, k: a.k, v: a.v, lse: a.lse, dout: a.dout, delta: a.delta };
  const dq = await kernelDispatch(
    gpu,
    ATTENTION_DQ_KERNEL,
    'backwardDq',
    {
      uniforms: { P: u },
      storage: { ...bwd, gradQ: a.gradQ, out: a.out },
      constants: { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, BK: t.BK },
      label: 'attention.backward.dq',
    },
    [ceilDiv(T * (H / G), WG), G, B],
  );
  const keysPerWg = WG / t.NS;
  const hpg = H / G;
  const parts = hpg > 1 ? a.headParts : undefined;
  if (parts) {
    checkSlices('attention.backward', { 'headParts.k': [parts.k, nq * dk], 'headParts.v': [parts.v, nq * dv] });
    checkMax('attention.backward', 'H', H, gpu.limits.maxComputeWorkgroupsPerDimension, 'workgroups');
  }
  const dkdv = await kernelDispatch(
    gpu,
    ATTENTION_DKDV_KERNEL,
    parts ? 'backwardDkDvSplit' : 'backwardDkDv',
    {
      uniforms: { P: u },
      storage: { ...bwd, gradK: parts ? parts.k : a.gradK, gradV: parts ? parts.v : a.gradV },
      constants: dkdvConstants(dk, dv, t),
      label: 'attention.backward.dkdv',
    },
    [ceilDiv(T, keysPerWg), parts ? H : G, B],
  );
  if (!parts) return [dq, dkdv];
  return [dq, dkdv, await sumHeadsDispatch(gpu, parts, { k: a.gradK, v: a.gradV }, { rows: nk, hpg, dk, dv }, 'attention.backward')];
}

/** gradK, gradV [rows, ·] = the sum over hpg heads of parts [rows, hpg, ·] (the head split's last step). */
export function sumHeadsDispatch(
  gpu: GpuContext,
  parts: { k: BufferSlice; v: BufferSlice },
  grad: { k: BufferSlice; v: BufferSlice },
  P: { rows: number; hpg: number; dk: number; dv: number },
  label: string,
): Promise<Dispatch> {
  return kernelDispatch(
    gpu,
    ATTENTION_SUM_HEADS_KERNEL,
    'sumHeads',
    {
      uniforms: { P },
      storage: { partK: parts.k, partV: parts.v, gradK: grad.k, gradV: grad.v },
      label: `${label}.sum_heads`,
    },
    grid1d(ceilDiv(P.rows * (P.dk + P.dv), WG), gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}
