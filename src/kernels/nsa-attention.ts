// Wrapper for the NSA branch attention shaders (nsa_attention_*.wgsl): compressed, selected and
// sliding-window attention, forward and deterministic backward (docs/nsa-spec.md), in two variants:
// 'group' for GPUs (group-centric: one workgroup per (b, t, g) with all heads of the group sharing
// staged key tiles; dK/dV per key chunk over staged query tiles) and 'simple' for software adapters
// (one invocation per query row, resp. key row, reading straight from storage). WGSL has no
// #include: the shared parts (attention_common.wgsl and, for the backward, attention_bwd_common.wgsl
// with dense attention; the dK/dV machinery of attention_keys.wgsl with its dK/dV kernel; the NSA
// uniform and per-variant parts) are concatenated here in front of each kernel's own file.
import attnBwdCode from '../../shaders/attention_bwd_common.wgsl?raw';
import attnCode from '../../shaders/attention_common.wgsl?raw';
import attnKeysCode from '../../shaders/attention_keys.wgsl?raw';
import commonCode from '../../shaders/nsa_attention_common.wgsl?raw';
import deltaCode from '../../shaders/nsa_attention_delta.wgsl?raw';
import dkdvCode from '../../shaders/nsa_attention_dkdv.wgsl?raw';
import dqCode from '../../shaders/nsa_attention_dq.wgsl?raw';
import fwdCode from '../../shaders/nsa_attention_fwd.wgsl?raw';
import rowsCode from '../../shaders/nsa_attention_rows.wgsl?raw';
import simpleCode from '../../shaders/nsa_attention_simple.wgsl?raw';
import simpleDkdvCode from '../../shaders/nsa_attention_simple_dkdv.wgsl?raw';
import simpleDqCode from '../../shaders/nsa_attention_simple_dq.wgsl?raw';
import simpleFwdCode from '../../shaders/nsa_attention_simple_fwd.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32, type UniformWord } from '../gpu/uniforms';
import { numCmpBlocks, numSelBlocks } from '../spec/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../spec/nsa-config';
import type { AttentionShape as NsaAttnShape } from '../spec/shapes';
import { nsaReverseIndexLengths, type NsaReverseIndexSlices } from './nsa-reverse-index';

export type NsaBranch = 'cmp' | 'sel' | 'win';

/** The attention shape shared with dense attention and the NSA core (src/reference/attention.ts). */
export type { NsaAttnShape };

const FWD = attnCode + commonCode + rowsCode + fwdCode;
const DQ = attnCode + attnBwdCode + commonCode + rowsCode + dqCode;
const DKDV = attnCode + attnBwdCode + commonCode + attnKeysCode + dkdvCode;
const FWD_SIMPLE = attnCode + commonCode + simpleCode + simpleFwdCode;
const DQ_SIMPLE = attnCode + attnBwdCode + commonCode + simpleCode + simpleDqCode;
const DKDV_SIMPLE = attnCode + attnBwdCode + commonCode + simpleCode + simpleDkdvCode;

/**
 * Kernel variant: 'group' (GPU-oriented: forward and dQ per (b, t, g) workgroup sharing staged key
 * tiles between the heads of a group, dK/dV per key chunk sharing staged query tiles) or 'simple'
 * (software-oriented: one invocation per query row, resp. key row, reading straight from storage).
 */
export type NsaAttnVariant = 'group' | 'simple';

/**
 * The variant to use: the one asked for, else by adapter. On a GPU the group kernels read each
 * key (query) once per tile for many threads through workgroup memory. On a software adapter
 * (SwiftShader) every workgroup barrier is a switch between emulated invocations and workgroup
 * memory is zero-initialised per workgroup, so the simple kernels, with no barriers and no
 * workgroup memory, run several times faster. Both are tested against the float64 reference; on
 * one adapter each is deterministic.
 */
export function nsaAttnVariant(gpu: GpuContext, variant?: NsaAttnVariant): NsaAttnVariant {
  return variant ?? (gpu.adapter.software ? 'simple' : 'group');
}

const BRANCH_CODE: Record<NsaBranch, number> = { cmp: 0, sel: 1, win: 2 };
/** Threads of the query-centric kernels (WG in nsa_attention_rows.wgsl). */
const ROW_WG = 64;
/** Workgroup memory budget per kernel (the portable WebGPU minimum). */
const SHARED_BYTES = 16384;
/** Largest head dim: the shaders keep up to 32 vec4 of a row in registers. */
export const NSA_ATTN_MAX_HEAD_DIM = 128;
/** Largest heads per group: one row of lanes per head in a 64-thread workgroup. */
export const NSA_ATTN_MAX_HPG = ROW_WG;
const NEG_INF_BITS = 0xff800000;

/** Tiles of the query-centric kernels (forward, dQ). */
export interface NsaRowTiling {
  DK4: number;
  DV4: number;
  /** Odd vec4 strides of a staged key / value (lanes reading different keys hit different banks). */
  KS: number;
  VS: number;
  /** Lanes per head row (hpg·NL ≤ 64 threads). */
  NL: number;
  /** Keys per staged tile. */
  BK: number;
  /** Staged selection row: nSel rounded up to a power of two. */
  NSEL: number;
  /** vec4 columns per lane-merge round: forward (over dv) and dQ (over dk). */
  CWo: number;
  CWq: number;
}

export function nsaRowTiling(hpg: number, dk: number, dv: number, nSel: number): NsaRowTiling {
  const DK4 = Math.ceil(dk / 4);
  const DV4 = Math.ceil(dv / 4);
  const KS = DK4 | 1;
  const VS = DV4 | 1;
  // kv: BK·(KS + VS) vec4 (after the key loop: 64 lane statistics, then the merge rounds);
  // selRow: NSEL words, a power of two so that few configs need their own pipeline; nKeys.
  // At most 32 keys per tile (more for tiny dims, so that the merge fits): workgroup memory is
  // zero-initialised per workgroup and, on SwiftShader, drives the compile time.
  const NSEL = 2 ** Math.ceil(Math.log2(nSel));
  const room = Math.floor((SHARED_BYTES - 4 * NSEL - 16) / (16 * (KS + VS)));
  const BK = Math.min(room, Math.max(32, Math.ceil((2 * ROW_WG) / (KS + VS))));
  if (BK < 1 || BK * (KS + VS) < 2 * ROW_WG) {
    throw new Error(`nsa attention: dk = ${dk}, dv = ${dv}, nSel = ${nSel} leave no room for a key tile in 16 KiB`);
  }
  const NL = Math.min(Math.floor(ROW_WG / hpg), BK);
  const tile = BK * (KS + VS);
  return {
    DK4, DV4, KS, VS, NL, BK, NSEL,
    CWo: Math.min(DV4, Math.floor((tile - ROW_WG) / (hpg * NL))),
    CWq: Math.min(DK4, Math.floor(tile / (hpg * NL))),
  };
}

/** Tiles of the key-outer dK/dV kernel. */
export interface NsaKeyTiling {
  /** Threads per key, each owning KC4 (VC4) vec4 columns of k (v). */
  NS: number;
  KC4: number;
  VC4: number;
  /** Keys per workgroup (sel: at most lSel; a chunk stays in one block); WG = NS·KB threads. */
  KB: number;
  WG: number;
  /** Query rows per staged tile. */
  BQ: number;
}

export function nsaKeyTiling(dk: number, dv: number, branch: NsaBranch, lSel: number): NsaKeyTiling {
  const DK4 = Math.ceil(dk / 4);
  const DV4 = Math.ceil(dv / 4);
  const NS = [1, 2, 4].find((n) => Math.ceil(DK4 / n) <= 8 && Math.ceil(DV4 / n) <= 8) ?? 4;
  const KC4 = Math.ceil(DK4 / NS);
  const VC4 = Math.ceil(DV4 / NS);
  // Sel: a power of two ≤ lSel, so that few configs share a pipeline.
  const KB = branch === 'sel' ? Math.min(64 / NS, 2 ** Math.floor(Math.log2(lSel))) : 64 / NS;
  const WG = KB * NS;
  // qs + dos: BQ·NS·(KC4 + VC4) vec4; rowT, rowLse, rowDelta: 3·BQ words; partS, partD: 2·BQ·WG
  // when NS > 1. A staged row costs each thread ~2·(KC4 + VC4) vec4 FMAs, so 32 rows (8 with
  // NS > 1, where a row is wide) amortise the 4 barriers of a tile; more would only add workgroup
  // memory (zero-initialised per workgroup; on SwiftShader it also drives the compile time).
  const perRow = 16 * NS * (KC4 + VC4) + 12 + (NS > 1 ? 8 * WG : 0);
  const BQ = Math.min(NS > 1 ? 8 : 32, Math.floor((SHARED_BYTES - 16) / perRow));
  return { NS, KC4, VC4, KB, WG, BQ };
}

type Slices<N extends string> = { [K in N]: BufferSlice };

export type NsaBranchForwardArgs = NsaAttnShape & {
  branch: NsaBranch;
  cfg: NsaConfig;
  sel?: BufferSlice;
  /** Kernel variant; default by adapter (nsaAttnVariant). */
  variant?: NsaAttnVariant;
} & Slices<'q' | 'k' | 'v' | 'out' | 'lse'>;

export type NsaBranchBackwardArgs = NsaAttnShape & {
  branch: NsaBranch;
  cfg: NsaConfig;
  sel?: BufferSlice;
  reverse?: NsaReverseIndexSlices;
  accumulateQ: boolean;
  /** Kernel variant; default by adapter (nsaAttnVariant). */
  variant?: NsaAttnVariant;
} & Slices<'q' | 'k' | 'v' | 'out' | 'lse' | 'dout' | 'delta' | 'gradQ' | 'gradK' | 'gradV'>;

/** Key rows per sequence of a branch: Ncmp(T) compressed rows for cmp, else T positions. */
export function nsaKeyRows(branch: NsaBranch, T: number, cfg: NsaConfig): number {
  return branch === 'cmp' ? numCmpBlocks(T, cfg) : T;
}

/** Rejects bad shapes, configs and short slices, naming the field, before any GPU work. */
function validate(gpu: GpuContext, label: string, a: NsaAttnShape & { branch: NsaBranch; cfg: NsaConfig }, need: Record<string, [BufferSlice | undefined, number]>): void {
  for (const f of ['B', 'T', 'H', 'G', 'dk', 'dv'] as const) {
    const x = a[f];
    if (!Number.isInteger(x) || x < 1) throw new Error(`${label}: ${f} = ${x} must be an integer ≥ 1`);
  }
  if (!(a.branch in BRANCH_CODE)) throw new Error(`${label}: branch = ${String(a.branch)} must be 'cmp', 'sel' or 'win'`);
  assertNsaConfig(a.cfg, { T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  for (const f of ['dk', 'dv'] as const) {
    if (a[f] > NSA_ATTN_MAX_HEAD_DIM) throw new Error(`${label}: ${f} = ${a[f]} exceeds ${NSA_ATTN_MAX_HEAD_DIM}`);
  }
  if (a.H / a.G > NSA_ATTN_MAX_HPG) throw new Error(`${label}: H/G = ${a.H / a.G} heads per group exceeds ${NSA_ATTN_MAX_HPG}`);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const [f, x] of [['T', a.T], ['G', a.G], ['B', a.B]] as const) {
    if (x > max) throw new Error(`${label}: ${f} = ${x} exceeds ${max} workgroups per dimension`);
  }
  for (const [name, [slice, floats]] of Object.entries(need)) {
    if (!slice) throw new Error(`${label}: ${name} is required for branch ${a.branch}`);
    if (slice.size < floats * 4) throw new Error(`${label}: ${name} holds ${slice.size} bytes; needs ${floats * 4}`);
  }
}

/** want (dK/dV): bit 0 dK, bit 1 dV. */
function uniformWords(a: NsaAttnShape & { branch: NsaBranch; cfg: NsaConfig }, cpb: number, accumulate: boolean, want = 3): UniformWord[] {
  const { B, T, H, G, dk, cfg } = a;
  const nB = numSelBlocks(T, cfg);
  const scale = 1 / Math.sqrt(dk);
  return [
    BRANCH_CODE[a.branch], T, H, G, H / G, nsaKeyRows(a.branch, T, cfg), cfg.l, cfg.d, cfg.lSel, cfg.nSel, cfg.w, nB, cpb,
    B * G * nB + 1, NEG_INF_BITS, accumulate ? 1 : 0, want, f32(scale * Math.LOG2E), f32(scale), B * T * H,
    B * nsaKeyRows(a.branch, T, cfg) * G,
  ];
}

/** Code, constants and grid of a query-row pass (forward or dQ) in the chosen variant. */
function rowPass(gpu: GpuContext, a: NsaBranchForwardArgs | NsaBranchBackwardArgs, pass: 'fwd' | 'dq'): { code: string; constants: Record<string, number>; grid: readonly [number, number?, number?] } {
  if (nsaAttnVariant(gpu, a.variant) === 'simple') {
    return { code: pass === 'fwd' ? FWD_SIMPLE : DQ_SIMPLE, constants: { DK: a.dk, DV: a.dv }, grid: grid1d(ceilDiv(a.B * a.T * a.H, ROW_WG)) };
  }
  return { code: pass === 'fwd' ? FWD : DQ, constants: rowConstants(a, pass === 'fwd' ? 'CWo' : 'CWq'), grid: [a.T, a.G, a.B] };
}

function rowConstants(a: NsaBranchForwardArgs | NsaBranchBackwardArgs, cw: 'CWo' | 'CWq'): Record<string, number> {
  const t = nsaRowTiling(a.H / a.G, a.dk, a.dv, a.cfg.nSel);
  return {
    DK: a.dk, DV: a.dv, DK4: t.DK4, DV4: t.DV4, KS: t.KS, VS: t.VS,
    NL: t.NL, BK: t.BK, CW: t[cw], NSEL: t.NSEL,
  };
}

function forwardNeeds(a: NsaBranchForwardArgs): Record<string, [BufferSlice | undefined, number]> {
  const { B, T, H, G, dk, dv } = a;
  const S = nsaKeyRows(a.branch, T, a.cfg);
  const need: Record<string, [BufferSlice | undefined, number]> = {
    q: [a.q, B * T * H * dk], k: [a.k, B * S * G * dk], v: [a.v, B * S * G * dv], out: [a.out, B * T * H * dv], lse: [a.lse, B * H * T],
  };
  if (a.branch === 'sel') need.sel = [a.sel, B * T * G * a.cfg.nSel];
  return need;
}

async function forwardDispatch(gpu: GpuContext, a: NsaBranchForwardArgs, keysRead?: BufferSlice): Promise<Dispatch> {
  const label = `nsa.${a.branch}.forward`;
  const need = forwardNeeds(a);
  if (keysRead) need.keysRead = [keysRead, a.B * a.T * a.G];
  validate(gpu, label, a, need);
  const isSel = a.branch === 'sel';
  const bindings = [gpu.uniform(uniformWords(a, 0, false)), a.q, a.k, a.v, a.out, a.lse];
  if (isSel) bindings.push(a.sel!);
  if (keysRead) bindings.push(keysRead);
  const entryPoint = `${isSel ? 'forwardSel' : 'forward'}${keysRead ? 'Count' : ''}`;
  const { code, constants, grid } = rowPass(gpu, a, 'fwd');
  return gpu.dispatch({ code, entryPoint, constants, label }, bindings, grid);
}

/**
 * Forward of one branch: out [B,T,H,dv] and lse [B,H,T] (natural log). For 'cmp', k/v are the
 * compressed kc/vc [B,Ncmp,G,·]; for 'sel', sel is the selection int32 [B,T,G,nSel] (ascending,
 * −1 padded, candidates only). A query without keys (cmp, ncmp(t) = 0) gets out = 0 and lse = −inf.
 */
export function nsaBranchForwardDispatch(gpu: GpuContext, a: NsaBranchForwardArgs): Promise<Dispatch> {
  return forwardDispatch(gpu, a);
}

/**
 * The forward with a debug counter: also writes keysRead u32 [B,T,G], the number of keys whose
 * score the group's first head computed (docs/nsa-spec.md property 7: per branch ncmp(t),
 * |selected positions ≤ t| and min(w, t + 1)).
 */
export function nsaBranchForwardCountingDispatch(gpu: GpuContext, a: NsaBranchForwardArgs & { keysRead: BufferSlice }): Promise<Dispatch> {
  return forwardDispatch(gpu, a, a.keysRead);
}

/**
 * Backward of one branch, given dout (the gradient wrt this branch's output). In order: delta =
 * rowsum(dout ∘ out) into the scratch delta [B,H,T]; dQ per query row, added into gradQ when
 * accumulateQ else overwriting it; dK/dV per key row (overwritten; [B,Ncmp,G,·] for 'cmp'). For
 * 'sel' pass sel and the reverse index built from it (nsaReverseIndexDispatches, run before).
 */
export async function nsaBranchBackwardDispatches(gpu: GpuContext, a: NsaBranchBackwardArgs): Promise<Dispatch[]> {
  const label = `nsa.${a.branch}.backward`;
  const { B, T, H, G, dk, dv, cfg } = a;
  const S = nsaKeyRows(a.branch, T, cfg);
  const isSel = a.branch === 'sel';
  const need = forwardNeeds(a);
  Object.assign(need, {
    dout: [a.dout, B * T * H * dv], delta: [a.delta, B * H * T],
    gradQ: [a.gradQ, B * T * H * dk], gradK: [a.gradK, B * S * G * dk], gradV: [a.gradV, B * S * G * dv],
  });
  if (isSel) need['reverse.queries'] = [a.reverse?.queries, nsaReverseIndexLengths(a, cfg).queries];
  validate(gpu, label, a, need);

  const simple = nsaAttnVariant(gpu, a.variant) === 'simple';
  const kt = nsaKeyTiling(dk, dv, a.branch, cfg.lSel);
  const cpb = Math.ceil(cfg.lSel / kt.KB);
  const chunks = isSel ? numSelBlocks(T, cfg) * cpb : Math.ceil(S / kt.KB);
  if (!simple && chunks > gpu.limits.maxComputeWorkgroupsPerDimension) throw new Error(`${label}: ${chunks} key chunks exceed the workgroup grid`);
  const u = gpu.uniform(uniformWords(a, cpb, a.accumulateQ));

  // Pipelines compile concurrently; the dispatches run in this order.
  const delta = gpu.dispatch(
    { code: deltaCode, entryPoint: 'rowDelta', constants: { DV: dv }, label: `${label}.delta` },
    [gpu.uniform([T, H, B * H * T]), a.out, a.dout, a.delta],
    grid1d(ceilDiv(B * H * T, ROW_WG)),
  );
  const dqBindings = [u, a.q, a.k, a.v, a.lse, a.dout, a.delta, a.gradQ];
  if (isSel) dqBindings.push(a.sel!);
  const rp = rowPass(gpu, a, 'dq');
  const dq = gpu.dispatch(
    { code: rp.code, entryPoint: isSel ? 'backwardDqSel' : 'backwardDq', constants: rp.constants, label: `${label}.dq` },
    dqBindings,
    rp.grid,
  );
  const kc: Record<string, number> = simple
    ? { DK: dk, DV: dv }
    : { DK: dk, DV: dv, DK4: Math.ceil(dk / 4), DV4: Math.ceil(dv / 4), NS: kt.NS, KB: kt.KB, KC4: kt.KC4, VC4: kt.VC4, BQ: kt.BQ };
  const keyCode = simple ? DKDV_SIMPLE : DKDV;
  const keyGrid: readonly [number, number?, number?] = simple ? grid1d(ceilDiv(B * S * G, ROW_WG)) : [chunks, G, B];
  const common = [u, a.q, a.k, a.v, a.lse, a.dout, a.delta];
  // The reverse index takes the binding gradV would: dK and dV of sel are two passes.
  const selPass = (want: number, grad: BufferSlice, name: string) =>
    gpu.dispatch(
      { code: keyCode, entryPoint: 'keyGradsSel', constants: kc, label: `${label}.${name}` },
      [gpu.uniform(uniformWords(a, cpb, a.accumulateQ, want)), a.q, a.k, a.v, a.lse, a.dout, a.delta, grad, a.reverse!.queries],
      keyGrid,
    );
  const keyPasses = isSel
    ? [selPass(1, a.gradK, 'dk'), selPass(2, a.gradV, 'dv')]
    : [gpu.dispatch({ code: keyCode, entryPoint: 'keyGrads', constants: kc, label: `${label}.dkdv` }, [...common, a.gradK, a.gradV], keyGrid)];
  return Promise.all([delta, dq, ...keyPasses]);
}
