// Wrapper for shaders/nsa_select.wgsl: NSA selection scores (group sums of p_slc) and top-n.
// Layouts: q [B,T,H,dk], kc [B,Ncmp,G,dk], lseCmp [B,H,T], scores [B,T,G,nBlocks] with
// nBlocks = ceil(T / lSel), selection int32 [B,T,G,nSel] ascending, −1 padded.
import code from '../../shaders/nsa_select.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32 } from '../gpu/uniforms';
import { assertNsaConfig, type NsaConfig } from '../spec/nsa-config';
import { numCmpBlocks, numSelBlocks } from '../spec/nsa-blocks';

const WG = 64;

export interface SelectionScoresArgs {
  /** [B,T,H,dk], after RoPE. */
  q: BufferSlice;
  /** Compressed keys [B,Ncmp,G,dk]. */
  kc: BufferSlice;
  /** Compressed-branch log-sum-exp [B,H,T] (natural log); not read where ncmp(t) = 0. */
  lseCmp: BufferSlice;
  /** [B,T,G,nBlocks], overwritten (0 for blocks no visible compressed block overlaps). */
  scores: BufferSlice;
  B: number;
  T: number;
  H: number;
  G: number;
  dk: number;
  cfg: NsaConfig;
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
  return [
    d.B, d.T, d.H, d.G, d.dk, numCmpBlocks(d.T, c), numSelBlocks(d.T, c), c.l, c.d, c.lSel, c.nSel,
    c.forceInit ? 1 : 0, c.forceLocal, total, f32(1 / Math.sqrt(d.dk)),
  ];
}

/** Group scores P (spec eq. 9 by overlap, eq. 10): one invocation per (b, t, g, j). */
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
    lseCmp: [a.lseCmp, B * H * T],
    scores: [a.scores, B * T * G * nB],
  });
  const total = B * T * G * nB;
  return gpu.dispatch(
    { code, entryPoint: 'scores', label },
    [gpu.uniform(params(cfg, { B, T, H, G, dk }, total)), a.q, a.kc, a.lseCmp, a.scores],
    grid1d(ceilDiv(total, WG)),
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
  return gpu.dispatch(
    { code, entryPoint: 'topN', label },
    [gpu.uniform(params(cfg, { B, T, H: G, G, dk: 1 }, rows)), a.scores, a.sel],
    grid1d(ceilDiv(rows, WG)),
  );
}
