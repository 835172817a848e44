// Wrapper for the NSA branch attention shaders (nsa_attention_*.wgsl): compressed, selected and
// sliding-window attention, forward and deterministic backward (docs/nsa-spec.md), in two variants:
// 'group' for GPUs (the selected branch's forward and dQ group-centric: one workgroup per (b, t, g)
// with all heads of the group sharing staged key tiles; the compressed and window branches', whose
// keys are one range per query, query-tiled as dense attention: WG rows of consecutive queries share
// each staged tile; dK/dV per key chunk over staged query tiles) and 'simple' for software adapters
// (one invocation per query row, resp. key row, reading straight from storage). WGSL has no
// #include: the shared parts (attention_common.wgsl and, for the backward, attention_bwd_common.wgsl
// with dense attention; the dK/dV machinery of attention_keys.wgsl with its dK/dV kernel; the NSA
// per-variant parts) are concatenated here in front of each kernel's own file, after the header
// generated from the declarations below (the NSA uniform and the bindings).
import attnBwdCode from '../../shaders/attention_bwd_common.wgsl?raw';
import attnCode from '../../shaders/attention_common.wgsl?raw';
import attnRowsCode from '../../shaders/attention_dense_rows.wgsl?raw';
import attnKeysCode from '../../shaders/attention_keys.wgsl?raw';
import attnRowsDqCode from '../../shaders/attention_rows_dq.wgsl?raw';
import commonCode from '../../shaders/nsa_attention_common.wgsl?raw';
import deltaCode from '../../shaders/nsa_attention_delta.wgsl?raw';
import dkdvCode from '../../shaders/nsa_attention_dkdv.wgsl?raw';
import dkdvRangeCode from '../../shaders/nsa_attention_dkdv_range.wgsl?raw';
import dkdvSelCode from '../../shaders/nsa_attention_dkdv_sel.wgsl?raw';
import dkdvSelBothCode from '../../shaders/nsa_attention_dkdv_sel_both.wgsl?raw';
import dqCode from '../../shaders/nsa_attention_dq.wgsl?raw';
import fwdCode from '../../shaders/nsa_attention_fwd.wgsl?raw';
import rowsCode from '../../shaders/nsa_attention_rows.wgsl?raw';
import simpleCode from '../../shaders/nsa_attention_simple.wgsl?raw';
import simpleDkdvCode from '../../shaders/nsa_attention_simple_dkdv.wgsl?raw';
import simpleDqCode from '../../shaders/nsa_attention_simple_dq.wgsl?raw';
import simpleFwdCode from '../../shaders/nsa_attention_simple_fwd.wgsl?raw';
import tiledCode from '../../shaders/nsa_attention_tiled.wgsl?raw';
import tiledDqCode from '../../shaders/nsa_attention_tiled_dq.wgsl?raw';
import tiledFwdCode from '../../shaders/nsa_attention_tiled_fwd.wgsl?raw';
import { numCmpBlocks, numSelBlocks } from '../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../definitions/nsa-config';
import type { AttentionShape as NsaAttnShape } from '../definitions/shapes';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkMax, checkSlices, type SliceArg } from '../gpu/checks';
import { fillTarget } from '../gpu/compute-units';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import {
  defineKernel,
  type Kernel,
  kernelDispatch,
  type KernelSpec,
  kernelUniform,
  type KernelVariant,
  type ShaderFile,
  type UniformValues,
} from '../gpu/kernel-interface';
import { ATTENTION_BWD, ATTENTION_QKV, attentionTiling, sumHeadsDispatch } from './attention';
import { nsaReverseIndexLengths, type NsaReverseIndexSlices } from './nsa-reverse-index';

export type NsaBranch = 'cmp' | 'sel' | 'win';

/** The attention shape shared with dense attention and the NSA core (src/reference/attention.ts). */
export type { NsaAttnShape };

/** The uniform of every NSA branch attention kernel (index conventions: nsa_attention_common.wgsl). */
const NSA_PARAMS = {
  struct: 'Params',
  fields: [
    ['branch', 'u32', 'CMP, SEL or WIN'],
    ['T', 'u32'],
    ['H', 'u32'],
    ['G', 'u32'],
    ['hpg', 'u32', 'heads per group, H / G'],
    ['S', 'u32', 'key rows per sequence: T, or Ncmp(T) for cmp'],
    ['l', 'u32', 'compression block'],
    ['d', 'u32', 'compression stride'],
    ['lSel', 'u32', 'selection block'],
    ['nSel', 'u32', 'selected blocks per (t, g)'],
    ['w', 'u32', 'window'],
    ['nB', 'u32', 'selection blocks per sequence, nb(T − 1)'],
    ['cpb', 'u32', 'dK/dV of sel: key chunks per selection block'],
    ['revBase', 'u32', "where the reverse index's query lists start in its buffer (B·G·nB + 1)"],
    ['negInf', 'u32', 'bit pattern of −inf: the lse of a query with no keys'],
    ['accumulate', 'u32', 'dQ: 1 adds into gradQ, 0 overwrites it'],
    ['want', 'u32', 'dK/dV: bit 0 computes dK, bit 1 dV'],
    ['scale', 'f32', '1 / sqrt(DK): scores q·k·scale in natural-log units'],
    ['rows', 'u32', "query rows B·T·H (grid of the simple variant's forward and dQ)"],
    ['keys', 'u32', "key rows B·S·G (grid of the simple variant's dK/dV)"],
    ['qSplits', 'u32', "keyGradsSplit: pieces of each key chunk's query range, one workgroup each"],
  ],
} as const;

const F = 'array<f32>';
const I = 'array<i32>';
const U = 'array<u32>';
const FWD_OUT = [...ATTENTION_QKV, ['out', F], ['lse', F]] as const;
/** Forward: 4 out, 5 lse, then sel (forwardSel), keysRead (forwardCount) or both (forwardSelCount). */
const FWD_ENTRIES = {
  forward: FWD_OUT,
  forwardSel: [...FWD_OUT, ['sel', I]],
  forwardCount: [...FWD_OUT, ['keysRead', U]],
  forwardSelCount: [...FWD_OUT, ['sel', I], ['keysReadSel', U]],
} as const;
/** The query-tiled forward (cmp, win): no selection. */
const TILED_FWD_ENTRIES = { forward: FWD_OUT, forwardCount: FWD_ENTRIES.forwardCount } as const;
/** The group-centric forward: the selected branch only (cmp and win run query-tiled). */
const ROWS_FWD_ENTRIES = { forwardSel: FWD_ENTRIES.forwardSel, forwardSelCount: FWD_ENTRIES.forwardSelCount } as const;
/** dQ: lse, dout, delta at 4–6, gradQ at 7, then sel (backwardDqSel). */
const DQ_ENTRIES = {
  backwardDq: [...ATTENTION_BWD, ['gradQ', F]],
  backwardDqSel: [...ATTENTION_BWD, ['gradQ', F], ['sel', I]],
} as const;
/** dK/dV: gradK, gradV at 7, 8; sel runs one gradient per pass (gradOut at 7) with the reverse index at 8. */
const DKDV_ENTRIES = {
  keyGrads: [...ATTENTION_BWD, ['gradK', F], ['gradV', F]],
  keyGradsSel: [...ATTENTION_BWD, ['gradOut', F], ['rev', I]],
} as const;
/** sel's one-pass dK/dV: gradK, gradV at 7, 8 and the reverse index at 9 (one past the portable 8). */
const SEL_BOTH_BINDINGS = [...ATTENTION_BWD, ['gradK', F], ['gradV', F], ['rev', I]] as const;
/** Storage bindings per shader stage that the one-pass sel dK/dV needs (q, k, v, lse, dout, delta, gradK, gradV, rev). */
const SEL_BOTH_STORAGE = 9;
/** The group kernel's head split: one workgroup per head; gradK/gradV/gradOut hold the heads' parts. */
const DKDV_SPLIT_ENTRIES = {
  ...DKDV_ENTRIES,
  keyGradsSplit: [...ATTENTION_BWD, ['gradK', F], ['gradV', F]],
  keyGradsSelSplit: [...ATTENTION_BWD, ['gradOut', F], ['rev', I]],
} as const;

/** The variant-independent type of a composition (group and simple share uniform and entries). */
type NsaKernel<E extends KernelSpec['entries']> = Kernel<{
  readonly name: string;
  readonly files: readonly ShaderFile[];
  readonly uniforms: { readonly P: typeof NSA_PARAMS };
  readonly entries: E;
}>;

const ATTN: ShaderFile = ['attention_common.wgsl', attnCode];
const ATTN_BWD: ShaderFile = ['attention_bwd_common.wgsl', attnBwdCode];
const NSA_COMMON: ShaderFile = ['nsa_attention_common.wgsl', commonCode];
const ROWS: ShaderFile = ['nsa_attention_rows.wgsl', rowsCode];
const SIMPLE: ShaderFile = ['nsa_attention_simple.wgsl', simpleCode];
const TILED_ROWS: ShaderFile = ['attention_dense_rows.wgsl', attnRowsCode];
const TILED: ShaderFile = ['nsa_attention_tiled.wgsl', tiledCode];
const KEYS: ShaderFile = ['attention_keys.wgsl', attnKeysCode];
const DKDV: ShaderFile = ['nsa_attention_dkdv.wgsl', dkdvCode];

export const NSA_ATTN_FWD_KERNEL = defineKernel({
  name: 'nsa.forward',
  files: [ATTN, NSA_COMMON, ROWS, ['nsa_attention_fwd.wgsl', fwdCode]],
  uniforms: { P: NSA_PARAMS },
  entries: ROWS_FWD_ENTRIES,
});
export const NSA_ATTN_DQ_KERNEL = defineKernel({
  name: 'nsa.dq',
  files: [ATTN, ATTN_BWD, NSA_COMMON, ROWS, ['nsa_attention_dq.wgsl', dqCode]],
  uniforms: { P: NSA_PARAMS },
  entries: { backwardDqSel: DQ_ENTRIES.backwardDqSel },
});
export const NSA_ATTN_DKDV_KERNEL = defineKernel({
  name: 'nsa.dkdv',
  files: [
    ATTN,
    ATTN_BWD,
    NSA_COMMON,
    KEYS,
    DKDV,
    ['nsa_attention_dkdv_range.wgsl', dkdvRangeCode],
    ['nsa_attention_dkdv_sel.wgsl', dkdvSelCode],
  ],
  uniforms: { P: NSA_PARAMS },
  entries: DKDV_SPLIT_ENTRIES,
});
/** sel's dK and dV in one pass: 9 storage bindings (gradK, gradV and the reverse index), where the adapter allows. */
export const NSA_ATTN_DKDV_SEL_BOTH_KERNEL = defineKernel({
  name: 'nsa.dkdv.sel',
  files: [ATTN, ATTN_BWD, NSA_COMMON, KEYS, DKDV, ['nsa_attention_dkdv_sel_both.wgsl', dkdvSelBothCode]],
  uniforms: { P: NSA_PARAMS },
  entries: { keyGradsSelBoth: SEL_BOTH_BINDINGS, keyGradsSelBothSplit: SEL_BOTH_BINDINGS },
});
/** The compressed and window branches' forward and dQ in the group variant (query-tiled). */
export const NSA_ATTN_TILED_FWD_KERNEL = defineKernel({
  name: 'nsa.tiled.forward',
  files: [ATTN, NSA_COMMON, TILED_ROWS, TILED, ['nsa_attention_tiled_fwd.wgsl', tiledFwdCode]],
  uniforms: { P: NSA_PARAMS },
  entries: TILED_FWD_ENTRIES,
});
export const NSA_ATTN_TILED_DQ_KERNEL = defineKernel({
  name: 'nsa.tiled.dq',
  files: [
    ATTN,
    ATTN_BWD,
    NSA_COMMON,
    TILED_ROWS,
    TILED,
    ['attention_rows_dq.wgsl', attnRowsDqCode],
    ['nsa_attention_tiled_dq.wgsl', tiledDqCode],
  ],
  uniforms: { P: NSA_PARAMS },
  entries: { backwardDq: DQ_ENTRIES.backwardDq },
});
export const NSA_ATTN_FWD_SIMPLE_KERNEL = defineKernel({
  name: 'nsa.simple.forward',
  files: [ATTN, NSA_COMMON, SIMPLE, ['nsa_attention_simple_fwd.wgsl', simpleFwdCode]],
  uniforms: { P: NSA_PARAMS },
  entries: FWD_ENTRIES,
});
export const NSA_ATTN_DQ_SIMPLE_KERNEL = defineKernel({
  name: 'nsa.simple.dq',
  files: [ATTN, ATTN_BWD, NSA_COMMON, SIMPLE, ['nsa_attention_simple_dq.wgsl', simpleDqCode]],
  uniforms: { P: NSA_PARAMS },
  entries: DQ_ENTRIES,
});
export const NSA_ATTN_DKDV_SIMPLE_KERNEL = defineKernel({
  name: 'nsa.simple.dkdv',
  files: [ATTN, ATTN_BWD, NSA_COMMON, SIMPLE, ['nsa_attention_simple_dkdv.wgsl', simpleDkdvCode]],
  uniforms: { P: NSA_PARAMS },
  entries: DKDV_ENTRIES,
});
export const NSA_ATTN_DELTA_KERNEL = defineKernel({
  name: 'nsa.delta',
  files: [['nsa_attention_delta.wgsl', deltaCode]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['H', 'u32'],
        ['n', 'u32', 'B·H·T'],
      ],
    },
  },
  entries: {
    rowDelta: [
      ['out', F],
      ['dout', F],
      ['delta', F],
    ],
  },
});

/**
 * Kernel variant: 'group' (GPU-oriented: sel's forward and dQ per (b, t, g) workgroup sharing staged
 * key tiles between the heads of a group, cmp's and win's query-tiled as dense attention; dK/dV per
 * key chunk sharing staged query tiles) or 'simple' (software-oriented: one invocation per query
 * row, resp. key row, reading straight from storage).
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
  const t = nsaRowTilingOrNull(hpg, dk, dv, nSel);
  if (!t) throw new Error(`nsa attention: dk = ${dk}, dv = ${dv}, nSel = ${nSel} leave no room for a key tile in 16 KiB`);
  return t;
}

/**
 * The group kernels' query-row tiling, or null where the staged selection row (nSel words) leaves
 * no room for a key tile in 16 KiB: DSA's top-k of thousands of tokens (2,559 at T = 16,384 in
 * npm run bench:nsa). Those passes then run the simple kernels (rowPass), which read the selection
 * from global memory: one invocation per (b, t, head) row.
 */
export function nsaRowTilingOrNull(hpg: number, dk: number, dv: number, nSel: number): NsaRowTiling | null {
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
  if (BK < 1 || BK * (KS + VS) < 2 * ROW_WG) return null;
  const NL = Math.min(Math.floor(ROW_WG / hpg), BK);
  const tile = BK * (KS + VS);
  return {
    DK4,
    DV4,
    KS,
    VS,
    NL,
    BK,
    NSEL,
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

/**
 * Representative pipelines for the compile-all test: every entry point of every composition, the
 * group and query-tiled kernels at head dims 16 and 64 (hpg 2, nSel 4; key tilings of cmp/win and
 * of sel, lSel 16).
 */
export const NSA_ATTENTION_VARIANTS: readonly KernelVariant[] = (() => {
  const out: KernelVariant[] = [{ kernel: NSA_ATTN_DELTA_KERNEL, entryPoint: 'rowDelta', constants: { DV: 16 } }];
  const add = (kernel: KernelVariant['kernel'], entries: object, constants: Record<string, number>) => {
    for (const entryPoint of Object.keys(entries)) out.push({ kernel, entryPoint, constants });
  };
  for (const d of [16, 64]) {
    const simple = { DK: d, DV: d };
    add(NSA_ATTN_FWD_SIMPLE_KERNEL, FWD_ENTRIES, simple);
    add(NSA_ATTN_DQ_SIMPLE_KERNEL, DQ_ENTRIES, simple);
    add(NSA_ATTN_DKDV_SIMPLE_KERNEL, DKDV_ENTRIES, simple);
    const t = nsaRowTiling(2, d, d, 4);
    const rows = { DK: d, DV: d, DK4: t.DK4, DV4: t.DV4, KS: t.KS, VS: t.VS, NL: t.NL, BK: t.BK, NSEL: t.NSEL };
    add(NSA_ATTN_FWD_KERNEL, ROWS_FWD_ENTRIES, { ...rows, CW: t.CWo });
    add(NSA_ATTN_DQ_KERNEL, { backwardDqSel: 0 }, { ...rows, CW: t.CWq });
    const tiled = attentionTiling(d, d);
    const tc = { DK: d, DV: d, DK4: tiled.DK4, DV4: tiled.DV4, BK: tiled.BK };
    add(NSA_ATTN_TILED_FWD_KERNEL, TILED_FWD_ENTRIES, tc);
    add(NSA_ATTN_TILED_DQ_KERNEL, { backwardDq: 0 }, tc);
    for (const branch of ['win', 'sel'] as const) {
      const kt = nsaKeyTiling(d, d, branch, 16);
      const kc = { DK: d, DV: d, DK4: Math.ceil(d / 4), DV4: Math.ceil(d / 4), NS: kt.NS, KB: kt.KB, KC4: kt.KC4, VC4: kt.VC4, BQ: kt.BQ };
      out.push({ kernel: NSA_ATTN_DKDV_KERNEL, entryPoint: branch === 'sel' ? 'keyGradsSel' : 'keyGrads', constants: kc });
      if (branch === 'sel')
        out.push({
          kernel: NSA_ATTN_DKDV_SEL_BOTH_KERNEL,
          entryPoint: d === 64 ? 'keyGradsSelBothSplit' : 'keyGradsSelBoth',
          constants: kc,
        });
      if (d === 64)
        out.push({ kernel: NSA_ATTN_DKDV_KERNEL, entryPoint: branch === 'sel' ? 'keyGradsSelSplit' : 'keyGradsSplit', constants: kc });
    }
  }
  return out;
})();

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
  /**
   * Scratch [B,S,H,dk] and [B,S,H,dv] (S: the branch's key rows) or larger: with the group kernels
   * and H > G, dK/dV run one workgroup per head and a last dispatch adds the heads' parts in a fixed
   * order. cmp and win also cut each key chunk's queries into pieces (a part each) while
   * B·chunks·H workgroups leave the GPU idle and the scratch holds the parts (nsaQuerySplits).
   */
  headParts?: { k: BufferSlice; v: BufferSlice };
  /** Query pieces of the head split (cmp, win; ≥ 1; tests). Default: nsaQuerySplits. */
  querySplits?: number;
  /**
   * sel with the group kernels: dK and dV in 1 pass (9 storage bindings; the default where the
   * device allows them) or 2 (one gradient each, within the portable 8; tests). Same bits.
   */
  selKeyPasses?: 1 | 2;
} & Slices<'q' | 'k' | 'v' | 'out' | 'lse' | 'dout' | 'delta' | 'gradQ' | 'gradK' | 'gradV'>;

/**
 * Query pieces per key chunk for the dK/dV head split of cmp and win: enough for `workgroups`
 * (B·chunks·H) × pieces to reach `target` (fillTarget: 4 per SM; 0 on software adapters: 1 piece),
 * as far as the head-parts scratch holds pieces × `partRows` (B·S·H) rows of dk and of dv floats.
 * Each piece adds a part per key and head that the head sum reads back: worth it only while the
 * GPU would idle (the compressed branch's few keys; the window's at batch 1).
 */
export function nsaQuerySplits(
  target: number,
  workgroups: number,
  parts: { k: BufferSlice; v: BufferSlice },
  partRows: number,
  dk: number,
  dv: number,
): number {
  // No key rows (T < l leaves cmp none) or a software adapter (target 0): nothing to split.
  if (workgroups === 0 || partRows === 0 || workgroups >= target) return 1;
  const fits = Math.min(Math.floor(parts.k.size / (4 * partRows * dk)), Math.floor(parts.v.size / (4 * partRows * dv)));
  return Math.max(1, Math.min(Math.ceil(target / workgroups), fits));
}

/** Key rows per sequence of a branch: Ncmp(T) compressed rows for cmp, else T positions. */
export function nsaKeyRows(branch: NsaBranch, T: number, cfg: NsaConfig): number {
  return branch === 'cmp' ? numCmpBlocks(T, cfg) : T;
}

/**
 * Rejects bad shapes, configs, missing, short or misaligned slices and overlapping slices (every
 * binding is read_write and the kernels write out/lse, resp. delta and the gradients: no in-place
 * use), naming the field, before any GPU work.
 */
function validate(
  gpu: GpuContext,
  label: string,
  a: NsaAttnShape & { branch: NsaBranch; cfg: NsaConfig },
  need: Record<string, SliceArg>,
): void {
  checkDims(label, { B: a.B, T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  if (!(a.branch in BRANCH_CODE)) argumentError(label, 'branch', `branch = ${String(a.branch)} must be 'cmp', 'sel' or 'win'`);
  assertNsaConfig(a.cfg, { T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  checkMax(label, 'dk', a.dk, NSA_ATTN_MAX_HEAD_DIM);
  checkMax(label, 'dv', a.dv, NSA_ATTN_MAX_HEAD_DIM);
  if (a.H / a.G > NSA_ATTN_MAX_HPG) argumentError(label, 'H', `H/G = ${a.H / a.G} heads per group exceeds ${NSA_ATTN_MAX_HPG}`);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const [f, x] of [
    ['T', a.T],
    ['G', a.G],
    ['B', a.B],
  ] as const)
    checkMax(label, f, x, max, 'workgroups per dimension');
  checkSlices(label, need, { requiredFor: `for branch ${a.branch}` });
}

/** want (dK/dV): bit 0 dK, bit 1 dV. */
function uniformValues(
  a: NsaAttnShape & { branch: NsaBranch; cfg: NsaConfig },
  cpb: number,
  accumulate: boolean,
  want = 3,
  qSplits = 1,
): UniformValues<typeof NSA_PARAMS> {
  const { B, T, H, G, dk, cfg } = a;
  const nB = numSelBlocks(T, cfg);
  const scale = 1 / Math.sqrt(dk);
  const S = nsaKeyRows(a.branch, T, cfg);
  return {
    branch: BRANCH_CODE[a.branch],
    T,
    H,
    G,
    hpg: H / G,
    S,
    l: cfg.l,
    d: cfg.d,
    lSel: cfg.lSel,
    nSel: cfg.nSel,
    w: cfg.w,
    nB,
    cpb,
    revBase: B * G * nB + 1,
    negInf: NEG_INF_BITS,
    accumulate: accumulate ? 1 : 0,
    want,
    scale,
    rows: B * T * H,
    keys: B * S * G,
    qSplits,
  };
}

/**
 * Kernel, constants and grid of a query-row pass (forward or dQ) in the chosen variant: 'simple'
 * (one invocation per row), 'tiled' (group variant, cmp and win: dense attention's query tiles) or
 * 'rows' (group variant, sel: one workgroup per (b, t, g)).
 */
function rowPass(
  gpu: GpuContext,
  a: NsaBranchForwardArgs | NsaBranchBackwardArgs,
  pass: 'fwd' | 'dq',
): { kind: 'simple' | 'tiled' | 'rows'; constants: Record<string, number>; grid: readonly [number, number?, number?] } {
  const { B, T, H, G, dk, dv } = a;
  if (nsaAttnVariant(gpu, a.variant) === 'group') {
    if (a.branch !== 'sel') {
      const { DK4, DV4, BK } = attentionTiling(dk, dv);
      return { kind: 'tiled', constants: { DK: dk, DV: dv, DK4, DV4, BK }, grid: [ceilDiv(T * (H / G), ROW_WG), G, B] };
    }
    const t = nsaRowTilingOrNull(H / G, dk, dv, a.cfg.nSel);
    if (t) return { kind: 'rows', constants: rowConstants(a, t, pass === 'fwd' ? 'CWo' : 'CWq'), grid: [T, G, B] };
  }
  return { kind: 'simple', constants: { DK: dk, DV: dv }, grid: grid1d(ceilDiv(B * T * H, ROW_WG)) };
}

function rowConstants(a: NsaBranchForwardArgs | NsaBranchBackwardArgs, t: NsaRowTiling, cw: 'CWo' | 'CWq'): Record<string, number> {
  return {
    DK: a.dk,
    DV: a.dv,
    DK4: t.DK4,
    DV4: t.DV4,
    KS: t.KS,
    VS: t.VS,
    NL: t.NL,
    BK: t.BK,
    CW: t[cw],
    NSEL: t.NSEL,
  };
}

function forwardNeeds(a: NsaBranchForwardArgs): Record<string, SliceArg> {
  const { B, T, H, G, dk, dv } = a;
  const S = nsaKeyRows(a.branch, T, a.cfg);
  const need: Record<string, SliceArg> = {
    q: [a.q, B * T * H * dk],
    k: [a.k, B * S * G * dk],
    v: [a.v, B * S * G * dv],
    out: [a.out, B * T * H * dv],
    lse: [a.lse, B * H * T],
  };
  if (a.branch === 'sel') need.sel = [a.sel, B * T * G * a.cfg.nSel];
  return need;
}

async function forwardDispatch(gpu: GpuContext, a: NsaBranchForwardArgs, keysRead?: BufferSlice): Promise<Dispatch> {
  const label = `nsa.${a.branch}.forward`;
  const need = forwardNeeds(a);
  if (keysRead) need.keysRead = [keysRead, a.B * a.T * a.G];
  validate(gpu, label, a, need);
  const { kind, constants, grid } = rowPass(gpu, a, 'fwd');
  const uniforms = { P: uniformValues(a, 0, false) };
  const base = { q: a.q, k: a.k, v: a.v, out: a.out, lse: a.lse };
  if (a.branch === 'sel') {
    const sel = a.sel!;
    const K: NsaKernel<typeof ROWS_FWD_ENTRIES> = kind === 'simple' ? NSA_ATTN_FWD_SIMPLE_KERNEL : NSA_ATTN_FWD_KERNEL;
    return keysRead
      ? kernelDispatch(gpu, K, 'forwardSelCount', { uniforms, storage: { ...base, sel, keysReadSel: keysRead }, constants, label }, grid)
      : kernelDispatch(gpu, K, 'forwardSel', { uniforms, storage: { ...base, sel }, constants, label }, grid);
  }
  // cmp, win: the query-tiled or simple kernel.
  const K: NsaKernel<typeof TILED_FWD_ENTRIES> = kind === 'tiled' ? NSA_ATTN_TILED_FWD_KERNEL : NSA_ATTN_FWD_SIMPLE_KERNEL;
  return keysRead
    ? kernelDispatch(gpu, K, 'forwardCount', { uniforms, storage: { ...base, keysRead }, constants, label }, grid)
    : kernelDispatch(gpu, K, 'forward', { uniforms, storage: base, constants, label }, grid);
}

/**
 * Forward of one branch: out [B,T,H,dv] and lse [B,H,T] (natural log). For 'cmp', k/v are the
 * compressed kc/vc [B,Ncmp,G,·]; for 'sel', sel is the selection int32 [B,T,G,nSel] (ascending,
 * −1 padded, candidates only). A query without keys (cmp, ncmp(t) = 0) gets out = 0 and lse = −inf.
 * With keysRead (u32 [B,T,G]) the counting entry point also writes, per row, the number of keys whose
 * score the group's first head computed (docs/nsa-spec.md property 7: per branch ncmp(t),
 * |selected positions ≤ t| and min(w, t + 1)).
 */
export function nsaBranchForwardDispatch(gpu: GpuContext, a: NsaBranchForwardArgs, keysRead?: BufferSlice): Promise<Dispatch> {
  return forwardDispatch(gpu, a, keysRead);
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
    dout: [a.dout, B * T * H * dv],
    delta: [a.delta, B * H * T],
    gradQ: [a.gradQ, B * T * H * dk],
    gradK: [a.gradK, B * S * G * dk],
    gradV: [a.gradV, B * S * G * dv],
  });
  if (isSel) need['reverse.queries'] = [a.reverse?.queries, nsaReverseIndexLengths(a, cfg).queries];
  validate(gpu, label, a, need);

  const simple = nsaAttnVariant(gpu, a.variant) === 'simple';
  const kt = nsaKeyTiling(dk, dv, a.branch, cfg.lSel);
  const cpb = Math.ceil(cfg.lSel / kt.KB);
  const chunks = isSel ? numSelBlocks(T, cfg) * cpb : Math.ceil(S / kt.KB);
  if (!simple && chunks > gpu.limits.maxComputeWorkgroupsPerDimension)
    argumentError(label, 'T', `${chunks} key chunks exceed the workgroup grid`);
  const u = kernelUniform(gpu, NSA_ATTN_DQ_KERNEL, 'P', uniformValues(a, cpb, a.accumulateQ));

  // Pipelines compile concurrently; the dispatches run in this order.
  const delta = kernelDispatch(
    gpu,
    NSA_ATTN_DELTA_KERNEL,
    'rowDelta',
    {
      uniforms: { P: { T, H, n: B * H * T } },
      storage: { out: a.out, dout: a.dout, delta: a.delta },
      constants: { DV: dv },
      label: `${label}.delta`,
    },
    grid1d(ceilDiv(B * H * T, ROW_WG)),
  );
  const common = { q: a.q, k: a.k, v: a.v, lse: a.lse, dout: a.dout, delta: a.delta };
  const rp = rowPass(gpu, a, 'dq');
  const dqArgs = { uniforms: { P: u }, constants: rp.constants, label: `${label}.dq` };
  // sel: the group-centric or simple kernel; cmp, win: the query-tiled or simple one.
  const dqSel: NsaKernel<Pick<typeof DQ_ENTRIES, 'backwardDqSel'>> = rp.kind === 'simple' ? NSA_ATTN_DQ_SIMPLE_KERNEL : NSA_ATTN_DQ_KERNEL;
  const dqRange: NsaKernel<Pick<typeof DQ_ENTRIES, 'backwardDq'>> =
    rp.kind === 'tiled' ? NSA_ATTN_TILED_DQ_KERNEL : NSA_ATTN_DQ_SIMPLE_KERNEL;
  const dq = isSel
    ? kernelDispatch(gpu, dqSel, 'backwardDqSel', { ...dqArgs, storage: { ...common, gradQ: a.gradQ, sel: a.sel! } }, rp.grid)
    : kernelDispatch(gpu, dqRange, 'backwardDq', { ...dqArgs, storage: { ...common, gradQ: a.gradQ } }, rp.grid);
  const kc: Record<string, number> = simple
    ? { DK: dk, DV: dv }
    : { DK: dk, DV: dv, DK4: Math.ceil(dk / 4), DV4: Math.ceil(dv / 4), NS: kt.NS, KB: kt.KB, KC4: kt.KC4, VC4: kt.VC4, BQ: kt.BQ };
  const KK: NsaKernel<typeof DKDV_ENTRIES> = simple ? NSA_ATTN_DKDV_SIMPLE_KERNEL : NSA_ATTN_DKDV_KERNEL;
  const hpg = H / G;
  const parts = !simple && hpg > 1 ? a.headParts : undefined;
  if (parts) {
    checkSlices(label, { 'headParts.k': [parts.k, B * S * H * dk], 'headParts.v': [parts.v, B * S * H * dv] });
    checkMax(label, 'H', H, gpu.limits.maxComputeWorkgroupsPerDimension, 'workgroups');
  }
  // Query pieces per key chunk (cmp and win with the head split).
  const qSplits =
    parts && !isSel ? (a.querySplits ?? nsaQuerySplits(fillTarget(gpu.adapter), B * chunks * H, parts, B * S * H, dk, dv)) : 1;
  if (parts && !isSel) {
    checkDims(label, { querySplits: qSplits });
    checkSlices(label, { 'headParts.k': [parts.k, qSplits * B * S * H * dk], 'headParts.v': [parts.v, qSplits * B * S * H * dv] });
    checkMax(label, 'querySplits', chunks * qSplits, gpu.limits.maxComputeWorkgroupsPerDimension, 'workgroups');
  }
  const keyGrid: readonly [number, number?, number?] = simple ? grid1d(ceilDiv(B * S * G, ROW_WG)) : [chunks * qSplits, parts ? H : G, B];
  // sel within the portable 8 storage bindings: the reverse index takes the binding gradV would, so
  // dK and dV are two passes (one gradient each).
  const selPass = (want: number, grad: BufferSlice, name: string) => {
    const args = {
      uniforms: { P: uniformValues(a, cpb, a.accumulateQ, want) },
      storage: { ...common, gradOut: grad, rev: a.reverse!.queries },
      constants: kc,
      label: `${label}.${name}`,
    };
    return parts
      ? kernelDispatch(gpu, NSA_ATTN_DKDV_KERNEL, 'keyGradsSelSplit', args, keyGrid)
      : kernelDispatch(gpu, KK, 'keyGradsSel', args, keyGrid);
  };
  const keyArgs = {
    uniforms: { P: qSplits > 1 ? uniformValues(a, cpb, a.accumulateQ, 3, qSplits) : u },
    storage: { ...common, gradK: parts ? parts.k : a.gradK, gradV: parts ? parts.v : a.gradV },
    constants: kc,
    label: `${label}.dkdv`,
  };
  // sel where 9 are allowed: both gradients in one pass, on cmp's and win's arguments (sel has no
  // query pieces, so their uniform is u) plus the reverse index.
  const selBoth = () => {
    const args = { ...keyArgs, storage: { ...keyArgs.storage, rev: a.reverse!.queries } };
    const entry = parts ? 'keyGradsSelBothSplit' : 'keyGradsSelBoth';
    return kernelDispatch(gpu, NSA_ATTN_DKDV_SEL_BOTH_KERNEL, entry, args, keyGrid);
  };
  const passes = a.selKeyPasses ?? (gpu.limits.maxStorageBuffersPerShaderStage >= SEL_BOTH_STORAGE ? 1 : 2);
  const keyPasses = isSel
    ? !simple && passes === 1
      ? [selBoth()]
      : [selPass(1, parts ? parts.k : a.gradK, 'dk'), selPass(2, parts ? parts.v : a.gradV, 'dv')]
    : [
        parts
          ? kernelDispatch(gpu, NSA_ATTN_DKDV_KERNEL, 'keyGradsSplit', keyArgs, keyGrid)
          : kernelDispatch(gpu, KK, 'keyGrads', keyArgs, keyGrid),
      ];
  if (parts)
    keyPasses.push(sumHeadsDispatch(gpu, parts, { k: a.gradK, v: a.gradV }, { rows: B * S * G, hpg: hpg * qSplits, dk, dv }, label));
  return Promise.all([delta, dq, ...keyPasses]);
}
