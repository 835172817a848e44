// The NSA attention core on the GPU, between the projections and the output projection:
// given Q (RoPE'd), per-branch K/V (K RoPE'd) and the gates, it compresses, runs the compressed
// branch, scores and selects blocks, runs the selected and window branches and mixes them by the
// gates; the backward returns every input gradient. Used by the model plan (one core per layer)
// and by the standalone op (src/model/nsa/op.ts). Layout follows docs/nsa-spec.md with a batch dim:
// q [B,T,H,dk], k*/v* [B,T,G,dk|dv], gates [B,T,H,3], outputs [B,T,H,dv], lse [B,H,T].
import { type GateAblation } from '../../definitions/gates';
import { numCmpBlocks, numSelBlocks } from '../../definitions/nsa-blocks';
import { cmpMlpHidden, type NsaConfig } from '../../definitions/nsa-config';
import type { AttentionShape } from '../../definitions/shapes';
import type { BufferSlice, PlaceTensor } from '../../gpu/arena';
import type { Dispatch, GpuContext } from '../../gpu/context';
import { type NsaAttnVariant, type NsaBranch, nsaBranchBackwardDispatches, nsaBranchForwardDispatch } from '../../kernels/nsa-attention';
import {
  type CmpMlpSlices,
  compressAvgBackwardDispatch,
  compressAvgForwardDispatch,
  compressMlpBackwardDispatches,
  compressMlpForwardDispatches,
  compressMlpScratchLengths,
} from '../../kernels/nsa-compress';
import { combineBackwardDispatches, combineBackwardGatesDispatches, combineForwardDispatch } from '../../kernels/nsa-gates';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths, type NsaReverseIndexSlices } from '../../kernels/nsa-reverse-index';
import { selectionScoresDispatch, topNSelectionDispatch } from '../../kernels/nsa-select';
import type { NsaKeysReadSlices } from '../../kernels/nsa-stats';

export interface NsaBranchKV {
  k: BufferSlice;
  v: BufferSlice;
}

/** Everything the forward writes and the backward reads (one set per layer). */
export interface NsaCoreSaved {
  kc: BufferSlice;
  vc: BufferSlice;
  oCmp: BufferSlice;
  lseCmp: BufferSlice;
  scores: BufferSlice;
  sel: BufferSlice;
  oSel: BufferSlice;
  lseSel: BufferSlice;
  oWin: BufferSlice;
  lseWin: BufferSlice;
  /** φ = mlp: per K and V, the MLP activations kept for the backward. */
  mlpSaved?: { k: { hPre: BufferSlice; act: BufferSlice }; v: { hPre: BufferSlice; act: BufferSlice } };
}

/** Backward temporaries, shareable by all layers. */
export interface NsaCoreScratch {
  dCmp: BufferSlice;
  dSel: BufferSlice;
  dWin: BufferSlice;
  dkc: BufferSlice;
  dvc: BufferSlice;
  delta: BufferSlice;
  reverse: NsaReverseIndexSlices;
  /** H > G: each head's part of a branch's dK, dV [B, T, H, dk|dv] (the group kernels' head split). */
  headParts?: NsaBranchKV;
  /** φ = mlp: gathered inputs and hidden gradients, per K and V. */
  mlp?: { k: { z: BufferSlice; dh: BufferSlice }; v: { z: BufferSlice; dh: BufferSlice } };
}

export interface NsaCoreIO {
  q: BufferSlice;
  cmp: NsaBranchKV;
  sel: NsaBranchKV;
  win: NsaBranchKV;
  gates: BufferSlice;
  out: BufferSlice;
  saved: NsaCoreSaved;
  /** φ = mlp weights (parameters). */
  mlp?: { k: CmpMlpSlices; v: CmpMlpSlices };
  /** The branch attention kernels: 'group' or 'simple'; default by adapter (nsaAttnVariant). */
  kernels?: NsaAttnVariant;
  /**
   * Given: each branch's forward runs its counting entry point and writes, per (b, t, g), the key
   * rows it read (u32 [B,T,G] per branch; the model's per-step statistics sum them).
   */
  keysRead?: NsaKeysReadSlices;
}

export interface NsaCoreGrads {
  /** Gradient of the loss wrt the combined output [B,T,H,dv]. */
  dout: BufferSlice;
  /** Overwritten. */
  dq: BufferSlice;
  /** Overwritten, [B,T,G,·] per branch (a shared-KV model passes three and sums them). */
  cmp: NsaBranchKV;
  sel: NsaBranchKV;
  win: NsaBranchKV;
  /**
   * 'logits': through the sigmoid (and ablation) into gate-logit gradients [B·T, 3H] (overwrite)
   * and the gate bias gradient (+=), as the model needs. 'gates': wrt the gate values themselves.
   */
  gates: { kind: 'logits'; dlogits: BufferSlice; dbias: BufferSlice; ablation: GateAblation } | { kind: 'gates'; dgates: BufferSlice };
  /** φ = mlp weight gradients (+=). */
  mlp?: { k: CmpMlpSlices; v: CmpMlpSlices };
}

export function nsaCoreSizes(s: AttentionShape, cfg: NsaConfig) {
  const N = s.B * s.T;
  const nCmp = numCmpBlocks(s.T, cfg);
  const nBlocks = numSelBlocks(s.T, cfg);
  return { N, nCmp, nBlocks, kc: s.B * nCmp * s.G * s.dk, vc: s.B * nCmp * s.G * s.dv, o: N * s.H * s.dv, lse: s.B * s.H * s.T };
}

/** One core's saved tensors, placed as `${prefix}${field}` (arena.ts layoutEntries/resolveLayout). */
export function nsaCoreSavedTensors(place: PlaceTensor, prefix: string, s: AttentionShape, cfg: NsaConfig): NsaCoreSaved {
  const z = nsaCoreSizes(s, cfg);
  const t = (field: string, floats: number) => place(`${prefix}${field}`, floats);
  const saved: NsaCoreSaved = {
    kc: t('kc', z.kc),
    vc: t('vc', z.vc),
    oCmp: t('oCmp', z.o),
    lseCmp: t('lseCmp', z.lse),
    scores: t('scores', s.B * s.T * s.G * z.nBlocks),
    sel: t('sel', s.B * s.T * s.G * cfg.nSel),
    oSel: t('oSel', z.o),
    lseSel: t('lseSel', z.lse),
    oWin: t('oWin', z.o),
    lseWin: t('lseWin', z.lse),
  };
  if (cfg.phi === 'mlp') {
    const mlp = (kv: 'k' | 'v', D: number) => {
      const L = compressMlpScratchLengths({ B: s.B, T: s.T, G: s.G, D, dHidden: cmpMlpHidden(D), cfg });
      return { hPre: t(`mlp.${kv}.hPre`, L.hPre), act: t(`mlp.${kv}.act`, L.act) };
    };
    saved.mlpSaved = { k: mlp('k', s.dk), v: mlp('v', s.dv) };
  }
  return saved;
}

/** One core's backward scratch (shareable by all layers), placed as `${prefix}${field}`. */
export function nsaCoreScratchTensors(place: PlaceTensor, prefix: string, s: AttentionShape, cfg: NsaConfig): NsaCoreScratch {
  const z = nsaCoreSizes(s, cfg);
  const r = nsaReverseIndexLengths(s, cfg);
  const t = (field: string, floats: number) => place(`${prefix}${field}`, floats);
  const scratch: NsaCoreScratch = {
    dCmp: t('dCmp', z.o),
    dSel: t('dSel', z.o),
    dWin: t('dWin', z.o),
    dkc: t('dkc', z.kc),
    dvc: t('dvc', z.vc),
    delta: t('delta', z.lse),
    reverse: { counts: t('rev.counts', r.counts), offsets: t('rev.offsets', r.offsets), queries: t('rev.queries', r.queries) },
  };
  if (s.H > s.G) scratch.headParts = { k: t('headParts.k', s.B * s.T * s.H * s.dk), v: t('headParts.v', s.B * s.T * s.H * s.dv) };
  if (cfg.phi === 'mlp') {
    const mlp = (kv: 'k' | 'v', D: number) => {
      const L = compressMlpScratchLengths({ B: s.B, T: s.T, G: s.G, D, dHidden: cmpMlpHidden(D), cfg });
      return { z: t(`mlp.${kv}.z`, L.z), dh: t(`mlp.${kv}.dh`, L.dh) };
    };
    scratch.mlp = { k: mlp('k', s.dk), v: mlp('v', s.dv) };
  }
  return scratch;
}

function mlpScratch(saved: NsaCoreSaved, scratch: NsaCoreScratch | undefined, kv: 'k' | 'v'): Record<string, BufferSlice> {
  const sv = saved.mlpSaved?.[kv];
  const sc = scratch?.mlp?.[kv];
  if (!sv || !sc) throw new Error(`nsa core: φ = mlp needs saved and scratch MLP buffers for ${kv}`);
  return { hPre: sv.hPre, act: sv.act, z: sc.z, dh: sc.dh };
}

/**
 * Forward dispatches. φ = mlp needs `scratch` too (the gathered block inputs live there).
 * Order: compress K and V → cmp attention → scores → top-n → sel attention → win attention → mix.
 */
export async function nsaCoreForward(
  gpu: GpuContext,
  s: AttentionShape,
  cfg: NsaConfig,
  io: NsaCoreIO,
  scratch?: NsaCoreScratch,
): Promise<Dispatch[]> {
  const { B, T, H, G, dk, dv } = s;
  const sv = io.saved;
  const list: Array<Promise<Dispatch | Dispatch[]>> = [];
  if (cfg.phi === 'avg') {
    list.push(
      compressAvgForwardDispatch(gpu, { x: io.cmp.k, out: sv.kc, B, T, G, D: dk, cfg }),
      compressAvgForwardDispatch(gpu, { x: io.cmp.v, out: sv.vc, B, T, G, D: dv, cfg }),
    );
  } else {
    if (!io.mlp) throw new Error('nsa core: φ = mlp needs the compression MLP weights');
    list.push(
      compressMlpForwardDispatches(gpu, {
        x: io.cmp.k,
        out: sv.kc,
        weights: io.mlp.k,
        scratch: mlpScratch(sv, scratch, 'k'),
        B,
        T,
        G,
        D: dk,
        dHidden: cmpMlpHidden(dk),
        cfg,
      }),
      compressMlpForwardDispatches(gpu, {
        x: io.cmp.v,
        out: sv.vc,
        weights: io.mlp.v,
        scratch: mlpScratch(sv, scratch, 'v'),
        B,
        T,
        G,
        D: dv,
        dHidden: cmpMlpHidden(dv),
        cfg,
      }),
    );
  }
  const branch = (branch: NsaBranch, kv: NsaBranchKV, out: BufferSlice, lse: BufferSlice) =>
    nsaBranchForwardDispatch(gpu, { ...branchInputs(s, cfg, io, branch, kv), out, lse }, io.keysRead?.[branch]);
  list.push(
    branch('cmp', { k: sv.kc, v: sv.vc }, sv.oCmp, sv.lseCmp),
    selectionScoresDispatch(gpu, { q: io.q, kc: sv.kc, scores: sv.scores, B, T, H, G, dk, cfg, variant: io.kernels }),
    topNSelectionDispatch(gpu, { scores: sv.scores, sel: sv.sel, B, T, G, cfg }),
    branch('sel', io.sel, sv.oSel, sv.lseSel),
    branch('win', io.win, sv.oWin, sv.lseWin),
    combineForwardDispatch(gpu, { gates: io.gates, oCmp: sv.oCmp, oSel: sv.oSel, oWin: sv.oWin, out: io.out, rows: B * T, H, dv }),
  );
  return (await Promise.all(list)).flat();
}

/** What a branch's forward and backward kernels both read: the shape, Q, the branch's K/V and, for 'sel', the selection. */
function branchInputs(s: AttentionShape, cfg: NsaConfig, io: NsaCoreIO, branch: NsaBranch, kv: NsaBranchKV) {
  const { B, T, H, G, dk, dv } = s;
  return {
    branch,
    cfg,
    B,
    T,
    H,
    G,
    dk,
    dv,
    q: io.q,
    k: kv.k,
    v: kv.v,
    sel: branch === 'sel' ? io.saved.sel : undefined,
    variant: io.kernels,
  };
}

/** Backward dispatches: gate mix → reverse index → three branches (dq summed) → compression. */
export async function nsaCoreBackward(
  gpu: GpuContext,
  s: AttentionShape,
  cfg: NsaConfig,
  io: NsaCoreIO,
  scratch: NsaCoreScratch,
  gr: NsaCoreGrads,
): Promise<Dispatch[]> {
  const { B, T, H, G, dk, dv } = s;
  const sv = io.saved;
  const rows = B * T;
  const list: Array<Promise<Dispatch | Dispatch[]>> = [];
  const mix = {
    gates: io.gates,
    oCmp: sv.oCmp,
    oSel: sv.oSel,
    oWin: sv.oWin,
    dCmp: scratch.dCmp,
    dSel: scratch.dSel,
    dWin: scratch.dWin,
    rows,
    H,
    dv,
    dout: gr.dout,
  };
  if (gr.gates.kind === 'logits') {
    list.push(combineBackwardDispatches(gpu, { ...mix, dlogits: gr.gates.dlogits, dbias: gr.gates.dbias, ablation: gr.gates.ablation }));
  } else {
    list.push(combineBackwardGatesDispatches(gpu, { ...mix, dgates: gr.gates.dgates }));
  }
  list.push(nsaReverseIndexDispatches(gpu, { B, T, H, G, dk, dv, cfg, sel: sv.sel, reverse: scratch.reverse }));
  const branch = (
    branch: NsaBranch,
    kv: NsaBranchKV,
    out: BufferSlice,
    lse: BufferSlice,
    dout: BufferSlice,
    grad: NsaBranchKV,
    accumulateQ: boolean,
  ) =>
    nsaBranchBackwardDispatches(gpu, {
      ...branchInputs(s, cfg, io, branch, kv),
      reverse: branch === 'sel' ? scratch.reverse : undefined,
      out,
      lse,
      dout,
      delta: scratch.delta,
      gradQ: gr.dq,
      gradK: grad.k,
      gradV: grad.v,
      headParts: scratch.headParts,
      accumulateQ,
    });
  list.push(
    branch('cmp', { k: sv.kc, v: sv.vc }, sv.oCmp, sv.lseCmp, scratch.dCmp, { k: scratch.dkc, v: scratch.dvc }, false),
    branch('sel', io.sel, sv.oSel, sv.lseSel, scratch.dSel, gr.sel, true),
    branch('win', io.win, sv.oWin, sv.lseWin, scratch.dWin, gr.win, true),
  );
  if (cfg.phi === 'avg') {
    list.push(
      compressAvgBackwardDispatch(gpu, { dout: scratch.dkc, dx: gr.cmp.k, B, T, G, D: dk, cfg }),
      compressAvgBackwardDispatch(gpu, { dout: scratch.dvc, dx: gr.cmp.v, B, T, G, D: dv, cfg }),
    );
  } else {
    if (!io.mlp || !gr.mlp) throw new Error('nsa core: φ = mlp needs the MLP weights and their gradients');
    list.push(
      compressMlpBackwardDispatches(gpu, {
        dout: scratch.dkc,
        x: io.cmp.k,
        dx: gr.cmp.k,
        weights: io.mlp.k,
        grads: gr.mlp.k,
        scratch: mlpScratch(sv, scratch, 'k'),
        B,
        T,
        G,
        D: dk,
        dHidden: cmpMlpHidden(dk),
        cfg,
      }),
      compressMlpBackwardDispatches(gpu, {
        dout: scratch.dvc,
        x: io.cmp.v,
        dx: gr.cmp.v,
        weights: io.mlp.v,
        grads: gr.mlp.v,
        scratch: mlpScratch(sv, scratch, 'v'),
        B,
        T,
        G,
        D: dv,
        dHidden: cmpMlpHidden(dv),
        cfg,
      }),
    );
  }
  return (await Promise.all(list)).flat();
}
