// Wrapper for shaders/nsa_select.wgsl: NSA selection scores (group sums of p_slc) and top-n (the scan of
// shaders/nsa_topn.wgsl, which the decode selection kernel runs too).
// Layouts: q [B,T,H,dk], kc [B,Ncmp,G,dk], scores [B,T,G,nBlocks] with nBlocks = ceil(T / lSel),
// selection int32 [B,T,G,nSel] ascending, −1 padded. The scores kernel computes each head's
// compressed probabilities itself, from its own row max and sum in natural-log units (see the
// shader), so they sum to 1 at any score magnitude and equal scores give equal probabilities.
import scoreRowCode from '../../shaders/nsa_score_row.wgsl?raw';
import scoreTiledCode from '../../shaders/nsa_score_tiled.wgsl?raw';
import code from '../../shaders/nsa_select.wgsl?raw';
import topnCode from '../../shaders/nsa_topn.wgsl?raw';
import { numCmpBlocks, numSelBlocks } from '../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../definitions/nsa-config';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkMax, checkSlices } from '../gpu/checks';
import { computeUnits } from '../gpu/compute-units';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { type NsaAttnVariant, nsaAttnVariant } from './nsa-attention';

const WG = 64;

const F = 'array<f32>';
/** scores, scoresTiled and their software twin scoresSerial bind the same buffers. */
const SCORES_BINDINGS = [
  ['blockScores', F],
  ['q', F],
  ['kc', F],
] as const;

export const NSA_SELECT_KERNEL = defineKernel({
  name: 'nsa_select',
  files: [
    ['nsa_topn.wgsl', topnCode],
    ['nsa_score_row.wgsl', scoreRowCode],
    ['nsa_select.wgsl', code],
    ['nsa_score_tiled.wgsl', scoreTiledCode],
  ],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['B', 'u32'],
        ['T', 'u32'],
        ['H', 'u32'],
        ['G', 'u32'],
        ['dk', 'u32'],
        ['N', 'u32', 'Ncmp(T)'],
        ['nB', 'u32', 'selection blocks ceil(T / lSel)'],
        ['l', 'u32'],
        ['d', 'u32'],
        ['lSel', 'u32'],
        ['nSel', 'u32'],
        ['forceInit', 'u32'],
        ['forceLocal', 'u32'],
        ['total', 'u32', 'invocations that do work: (b, t, g) rows'],
        ['scale', 'f32', '1/√dk'],
      ],
    },
  },
  // blockScores first in both: a name keeps one binding index in every entry point (kernelHeader).
  entries: {
    scores: SCORES_BINDINGS,
    scoresTiled: SCORES_BINDINGS,
    scoresSerial: SCORES_BINDINGS,
    topN: [
      ['blockScores', F],
      ['sel', 'array<i32>'],
    ],
  },
});

/**
 * SR_CH of shaders/nsa_score_row.wgsl: compressed blocks held in workgroup memory at once, the
 * power of two ≥ n (so each s_k is computed once) up to 2048 (8 KiB), at least the 64 lanes.
 * Shared by the decode selection kernel, whose bits must equal these.
 */
export function scoreRowChunk(nCmp: number): number {
  return Math.min(2048, Math.max(64, 2 ** Math.ceil(Math.log2(Math.max(1, nCmp)))));
}

/** Largest dk of the query-tiled scores (MAX_DK of nsa_score_tiled.wgsl). */
const TILED_MAX_DK = 128;

/** scoresTiled's constants: the key width and the keys per staged tile (16 KiB, at most 128). */
function tiledConstants(dk: number): Record<string, number> {
  return { SR_CH: 64, SDK: dk, TK: Math.min(128, Math.floor(4096 / dk)) };
}

export const NSA_SELECT_VARIANTS: readonly KernelVariant[] = [
  { kernel: NSA_SELECT_KERNEL, entryPoint: 'scores', constants: { SR_CH: 2048 } },
  { kernel: NSA_SELECT_KERNEL, entryPoint: 'scoresTiled', constants: tiledConstants(64) },
  { kernel: NSA_SELECT_KERNEL, entryPoint: 'scoresTiled', constants: tiledConstants(5) },
  { kernel: NSA_SELECT_KERNEL, entryPoint: 'scoresSerial', constants: { SR_CH: 64 } },
  { kernel: NSA_SELECT_KERNEL, entryPoint: 'topN', constants: { SR_CH: 64 } },
];

export interface SelectionScoresArgs {
  /** [B,T,H,dk], after RoPE. */
  q: BufferSlice;
  /** Compressed keys [B,Ncmp,G,dk]. */
  kc: BufferSlice;
  /** [B,T,G,nBlocks], overwritten (0 for blocks no visible compressed block overlaps). */
  scores: BufferSlice;
  B: number;
  T: number;
  H: number;
  G: number;
  dk: number;
  cfg: NsaConfig;
  /** Blocks per workgroup-memory chunk (SR_CH; default scoreRowChunk(Ncmp)): same bits at any value. */
  chunk?: number;
  /**
   * 'group': the GPU kernels (layout below); 'simple': one invocation per row (scoreRowSerial), for
   * software adapters, where barriers are slow. Same arithmetic. Default by adapter, as the attention.
   */
  variant?: NsaAttnVariant;
  /**
   * The group variant's layout: 'tiled', one invocation per row and 64 consecutive queries of a
   * (b, g) sharing each staged tile of compressed keys; 'rows', one 64-lane workgroup per row. Same
   * arithmetic. Default: tiled where its B·G·ceil(T / 64) workgroups give each compute unit one (every
   * size on a software adapter) and dk ≤ 128, else rows (m7c-125m's T = 1,024 at batch 1 would be 32
   * workgroups on an H100's 132 SMs, each invocation a whole row; at T = 16,384, 512).
   */
  layout?: 'rows' | 'tiled';
}

export interface TopNSelectionArgs {
  /** [B,T,G,nBlocks]. */
  scores: BufferSlice;
  /** int32 [B,T,G,nSel], overwritten. */
  sel: BufferSlice;
  B: number;
  T: number;
  G: number;
  cfg: NsaConfig;
}

function params(c: NsaConfig, d: { B: number; T: number; H: number; G: number; dk: number }, total: number) {
  return {
    P: {
      B: d.B,
      T: d.T,
      H: d.H,
      G: d.G,
      dk: d.dk,
      N: numCmpBlocks(d.T, c),
      nB: numSelBlocks(d.T, c),
      l: c.l,
      d: c.d,
      lSel: c.lSel,
      nSel: c.nSel,
      forceInit: c.forceInit ? 1 : 0,
      forceLocal: c.forceLocal,
      total,
      scale: 1 / Math.sqrt(d.dk),
    },
  };
}

/** Group scores P (spec eq. 9 by overlap, eq. 10): one workgroup (or, 'simple', one invocation) per (b, t, g) row. */
export async function selectionScoresDispatch(gpu: GpuContext, a: SelectionScoresArgs): Promise<Dispatch> {
  const label = 'nsa_select.scores';
  const { B, T, H, G, dk, cfg } = a;
  checkDims(label, { B, T, H, G, dk }, { B: 0, T: 0 });
  assertNsaConfig(cfg, { T, H, G, dk });
  const N = numCmpBlocks(T, cfg);
  const nB = numSelBlocks(T, cfg);
  checkSlices(label, {
    q: [a.q, B * T * H * dk],
    kc: [a.kc, B * N * G * dk],
    scores: [a.scores, B * T * G * nB],
  });
  const rows = B * T * G;
  const serial = nsaAttnVariant(gpu, a.variant) === 'simple';
  const tileGrid = [ceilDiv(T, WG), G, B] as const;
  const layout = a.layout ?? (dk <= TILED_MAX_DK && B * G * tileGrid[0] >= computeUnits(gpu.adapter) ? 'tiled' : 'rows');
  if (layout === 'tiled') checkMax(label, 'dk', dk, TILED_MAX_DK);
  const uniforms = params(cfg, { B, T, H, G, dk }, rows);
  const storage = { blockScores: a.scores, q: a.q, kc: a.kc };
  if (serial)
    // One invocation per row, 64 to a workgroup.
    return kernelDispatch(
      gpu,
      NSA_SELECT_KERNEL,
      'scoresSerial',
      { uniforms, storage, constants: { SR_CH: 64 }, label },
      grid1d(ceilDiv(rows, WG)),
    );
  if (layout === 'tiled')
    return kernelDispatch(gpu, NSA_SELECT_KERNEL, 'scoresTiled', { uniforms, storage, constants: tiledConstants(dk), label }, tileGrid);
  // One workgroup per row.
  return kernelDispatch(
    gpu,
    NSA_SELECT_KERNEL,
    'scores',
    { uniforms, storage, constants: { SR_CH: a.chunk ?? scoreRowChunk(N) }, label },
    grid1d(rows, gpu.limits.maxComputeWorkgroupsPerDimension),
  );
}

/** Top-n per (b, t, g) row (spec "Top-n selection"): forced blocks, then by P, ties to the lower j. */
export async function topNSelectionDispatch(gpu: GpuContext, a: TopNSelectionArgs): Promise<Dispatch> {
  const label = 'nsa_select.topN';
  const { B, T, G, cfg } = a;
  checkDims(label, { B, T, G }, { B: 0, T: 0 });
  assertNsaConfig(cfg, { T, G });
  const nB = numSelBlocks(T, cfg);
  checkSlices(label, { scores: [a.scores, B * T * G * nB], sel: [a.sel, B * T * G * cfg.nSel] });
  const rows = B * T * G;
  return kernelDispatch(
    gpu,
    NSA_SELECT_KERNEL,
    'topN',
    {
      uniforms: params(cfg, { B, T, H: G, G, dk: 1 }, rows),
      storage: { blockScores: a.scores, sel: a.sel },
      constants: { SR_CH: 64 },
      label,
    },
    grid1d(ceilDiv(rows, WG)),
  );
}
