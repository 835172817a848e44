// The activation tensors of one model plan, as a typed table (llm.c's ActivationTensors): forward
// activations kept per layer (the backward needs them), gradient temporaries shared by all layers
// (the backward walks the layers one at a time), and token inputs with one slot per micro-batch so
// a whole optimizer step, gradient accumulation included, is one submit. The arena names live in
// this file only: one function lays the table out, once to size the arena and once to resolve it
// (layoutEntries / resolveLayout / createLayoutArena in src/gpu/arena.ts).
import { hasMlp, type ModelConfig, shortConvTaps } from '../definitions/model-config';
import { numSelBlocks } from '../definitions/nsa-blocks';
import type { AttentionShape } from '../definitions/shapes';
import { type ArenaEntry, type BufferSlice, layoutEntries, type PlaceTensor } from '../gpu/arena';
import { tokenIndexLength } from '../kernels/embedding-index';
import type { NsaReverseIndexSlices } from '../kernels/nsa-reverse-index';
import { NSA_STATS_MAX_DISTANCE, type NsaKeysReadSlices, nsaStatsLength } from '../kernels/nsa-stats';
import { type DsaSaved, dsaSavedTensors, type DsaScratch, dsaScratchTensors } from './dsa/core';
import { type MobaSaved, mobaSavedTensors, mobaScratchTensors } from './mechanisms';
import { type NsaBranchKV, type NsaCoreSaved, nsaCoreSavedTensors, type NsaCoreScratch, nsaCoreScratchTensors } from './nsa/core';

export interface PlanShape {
  B: number;
  T: number;
  N: number;
  gradAccum: number;
  /** Targets per sequence the loss counts (the others are IGNORE_TARGET); T when all count. */
  scoredPerSequence: number;
}

/** One micro-batch's inputs: token ids [N], targets [N] and the embedding backward's token index. */
export interface BatchSlots {
  tokens: BufferSlice;
  targets: BufferSlice;
  tokenIndex: BufferSlice;
}

export interface LayerActivations {
  attnNormed: BufferSlice;
  attnRstd: BufferSlice;
  /** [N, H·dk], RoPE'd in place. */
  q: BufferSlice;
  /** K/V projections [N, G·dk|dv] (K RoPE'd): one pair (dense, shared KV) or cmp, sel, win. */
  kv: NsaBranchKV[];
  /** With a short convolution: each pair's K projection before it, [N, G·dk] (the convolution's input). */
  kRaw?: BufferSlice[];
  /** Attention output [N, H·dv]. */
  attn: BufferSlice;
  xMid: BufferSlice;
  /** The MLP's norm and SwiGLU (a = normed·w1, b = normed·w3, h = silu(a)·b, each [N, F]); absent in attention-only layers. */
  mlp?: { normed: BufferSlice; rstd: BufferSlice; a: BufferSlice; b: BufferSlice; h: BufferSlice };
  /** Dense, window and MoBA attention: log-sum-exp [B, H, T]. */
  lse?: BufferSlice;
  /** MoBA: block means, group scores and selection (src/model/mechanisms.ts). */
  moba?: MobaSaved;
  /** NSA: gates [B,T,H,3], the step's statistics, the key rows each branch read (u32 [B,T,G]) and the core's saved tensors. */
  nsa?: { gates: BufferSlice; stats: BufferSlice; keysRead: NsaKeysReadSlices; core: NsaCoreSaved };
  /** DSA: the indexer's qI [N, H_I, d_I], kI [N, d_I], wI [N, H_I] and the scores and selection (src/model/dsa/core.ts). */
  dsa?: { qI: BufferSlice; kI: BufferSlice; wI: BufferSlice; saved: DsaSaved };
}

/** Gradient temporaries, shared across layers. */
export interface GradientScratch {
  dx: BufferSlice;
  dnormed: BufferSlice;
  /** SwiGLU gradients [N, F]; absent without an MLP. */
  mlp?: { dh: BufferSlice; da: BufferSlice; db: BufferSlice };
  /** With a short convolution: the gradient of the K projection before it, [N, G·dk]. */
  dkRaw?: BufferSlice;
  dattn: BufferSlice;
  dq: BufferSlice;
  /** Gradients of the RoPE'd K/V per branch: one pair (dense) or cmp, sel, win (NSA). */
  dkv: NsaBranchKV[];
  delta: BufferSlice;
  /** Dense attention with H > G: each head's part of dK, dV [N, H, dk|dv] (the head split). */
  headParts?: NsaBranchKV;
  nsa?: { gateLogits: BufferSlice; dgateLogits: BufferSlice; core: NsaCoreScratch };
  /** MoBA: the selected branch's reverse index. */
  mobaReverse?: NsaReverseIndexSlices;
  /** DSA: the indexer's gradients dqI, dkI, dwI (shapes of qI, kI, wI) and the core's backward scratch. */
  dsa?: { dqI: BufferSlice; dkI: BufferSlice; dwI: BufferSlice; scratch: DsaScratch };
}

export interface Activations {
  batches: BatchSlots[];
  /** Residual stream x_0 … x_L, each [N, C]. */
  x: BufferSlice[];
  layers: LayerActivations[];
  finalNormed: BufferSlice;
  finalRstd: BufferSlice;
  /** [N, V]; the cross-entropy overwrites them in place with dlogits. */
  logits: BufferSlice;
  /** Per-row losses [N] of the last forward. */
  losses: BufferSlice;
  /** Output projection scratch [N, C]. */
  proj: BufferSlice;
  grads: GradientScratch;
  /** Scalars read back: the step's mean loss, [grad norm, clip scale], the eval forward's mean loss. */
  lossAcc: BufferSlice;
  gradStats: BufferSlice;
  valLoss: BufferSlice;
  /** DSA: the step's indexer loss, Σ over layers of L_I (mean over the micro-batches). */
  indexLossAcc?: BufferSlice;
}

export function nsaShape(c: ModelConfig, s: PlanShape): AttentionShape {
  return { B: s.B, T: s.T, H: c.nHeads, G: c.nKvGroups, dk: c.dk, dv: c.dv };
}

/** Largest block distance bt − j a selection can have (histogram buckets 0..this). */
export function nsaStatsMaxDistance(c: ModelConfig): number {
  return c.nsa ? Math.min(NSA_STATS_MAX_DISTANCE, Math.max(1, numSelBlocks(c.seqLen, c.nsa) - 1)) : 1;
}

/** K/V projection pairs per layer: 3 for NSA with per-branch K/V, else 1. */
export function kvPairs(c: ModelConfig): number {
  return c.attention === 'nsa' && c.nsa && !c.nsa.sharedKV ? 3 : 1;
}

/** Names of the K/V pairs in kvPairs order (labels of their projections). */
const KV_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['k_cmp', 'v_cmp'],
  ['k_sel', 'v_sel'],
  ['k_win', 'v_win'],
];
const DKV_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['dk', 'dv'],
  ['dk_sel', 'dv_sel'],
  ['dk_win', 'dv_win'],
];

/** Label of layer l's K/V pair i in dispatch labels ('k' for a single pair). */
export function kvLabel(c: ModelConfig, i: number, which: 0 | 1): string {
  return kvPairs(c) === 1 ? (which === 0 ? 'k' : 'v') : KV_NAMES[i][which];
}

/** Label of the i-th K/V gradient pair ('dk', 'dk_sel', …). */
export function dkvLabel(i: number, which: 0 | 1): string {
  return DKV_NAMES[i][which];
}

/** The one layout: every name and size of the activation arena. */
export function activationLayout(c: ModelConfig, s: PlanShape): (place: PlaceTensor) => Activations {
  return (place) => layout(c, s, place);
}

function layout(c: ModelConfig, s: PlanShape, f32: PlaceTensor): Activations {
  const { N, B, T } = s;
  const C = c.dim;
  const F = c.ffnHidden;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const dsa = c.attention === 'dsa' ? c.dsa : undefined;
  const shape = nsaShape(c, s);
  const batches = Array.from({ length: s.gradAccum }, (_, m) => ({
    tokens: f32(`tokens.${m}`, N),
    targets: f32(`targets.${m}`, N),
    tokenIndex: f32(`tokidx.${m}`, tokenIndexLength(N)),
  }));
  const x = Array.from({ length: c.nLayers + 1 }, (_, l) => f32(`x.${l}`, N * C));
  const layers = Array.from({ length: c.nLayers }, (_, l): LayerActivations => {
    const L = (what: string, n: number) => f32(`l${l}.${what}`, n);
    const kvNames = kvPairs(c) === 1 ? [['k', 'v']] : KV_NAMES;
    const la: LayerActivations = {
      attnNormed: L('attn_normed', N * C),
      attnRstd: L('attn_rstd', N),
      q: L('q', N * H * c.dk),
      kv: kvNames.map(([k, v]) => ({ k: L(k, N * G * c.dk), v: L(v, N * G * c.dv) })),
      attn: L('attn', N * H * c.dv),
      xMid: L('x_mid', N * C),
    };
    if (shortConvTaps(c) > 0) la.kRaw = kvNames.map(([k]) => L(`${k}_raw`, N * G * c.dk));
    if (hasMlp(c))
      la.mlp = { normed: L('mlp_normed', N * C), rstd: L('mlp_rstd', N), a: L('a', N * F), b: L('b', N * F), h: L('h', N * F) };
    if (nsa) {
      la.nsa = {
        gates: L('gates', N * 3 * H),
        stats: L('nsa_stats', nsaStatsLength(nsaStatsMaxDistance(c))),
        keysRead: { cmp: L('nsa_reads_cmp', B * T * G), sel: L('nsa_reads_sel', B * T * G), win: L('nsa_reads_win', B * T * G) },
        core: nsaCoreSavedTensors(f32, `l${l}.nsa.`, shape, nsa),
      };
    } else la.lse = L('lse', B * H * T);
    if (c.attention === 'moba' && c.moba) la.moba = mobaSavedTensors(f32, `l${l}.moba.`, shape, c.moba);
    if (dsa) {
      const { indexHeads: HI, indexDim: dI } = dsa;
      la.dsa = {
        qI: L('qI', N * HI * dI),
        kI: L('kI', N * dI),
        wI: L('wI', N * HI),
        saved: dsaSavedTensors(f32, `l${l}.dsa.`, shape, dsa),
      };
    }
    return la;
  });
  const finalNormed = f32('final_normed', N * C);
  const finalRstd = f32('final_rstd', N);
  const logits = f32('logits', N * c.vocabSize);
  const losses = f32('losses', N);
  const proj = f32('proj', N * C);
  const grads: GradientScratch = {
    dx: f32('dx', N * C),
    dnormed: f32('dnormed', N * C),
    dattn: f32('dattn', N * H * c.dv),
    dq: f32('dq', N * H * c.dk),
    dkv: [{ k: f32('dk', N * G * c.dk), v: f32('dv', N * G * c.dv) }],
    delta: f32('delta', B * H * T),
  };
  if (hasMlp(c)) grads.mlp = { dh: f32('dh', N * F), da: f32('da', N * F), db: f32('db', N * F) };
  if (shortConvTaps(c) > 0) grads.dkRaw = f32('dk_raw', N * G * c.dk);
  if (c.attention === 'moba' && c.moba) grads.mobaReverse = mobaScratchTensors(f32, 'moba.', shape, c.moba);
  if (dsa) {
    const { indexHeads: HI, indexDim: dI } = dsa;
    grads.dsa = {
      dqI: f32('dqI', N * HI * dI),
      dkI: f32('dkI', N * dI),
      dwI: f32('dwI', N * HI),
      scratch: dsaScratchTensors(f32, 'dsa.', shape, dsa),
    };
  }
  if (!nsa && H > G) grads.headParts = { k: f32('dk_heads', N * H * c.dk), v: f32('dv_heads', N * H * c.dv) };
  if (nsa) {
    const gateLogits = f32('gate_logits', N * 3 * H);
    const dgateLogits = f32('dgate_logits', N * 3 * H);
    for (const i of [1, 2]) grads.dkv.push({ k: f32(DKV_NAMES[i][0], N * G * c.dk), v: f32(DKV_NAMES[i][1], N * G * c.dv) });
    grads.nsa = { gateLogits, dgateLogits, core: nsaCoreScratchTensors(f32, 'nsa.', shape, nsa) };
  }
  return {
    batches,
    x,
    layers,
    finalNormed,
    finalRstd,
    logits,
    losses,
    proj,
    grads,
    lossAcc: f32('loss_acc', 1),
    gradStats: f32('grad_stats', 2),
    valLoss: f32('val_loss', 1),
    ...(dsa ? { indexLossAcc: f32('index_loss_acc', 1) } : {}),
  };
}

/** The arena entries of the activations (the sizing pass of the layout: resource estimates). */
export function activationEntries(c: ModelConfig, s: PlanShape): ArenaEntry[] {
  return layoutEntries(activationLayout(c, s));
}
