// The DSA attention of one layer on the GPU (docs/dsa-spec.md), from the main q/k/v and the
// indexer's qI/kI/wI (after projections and RoPE): index scores, token top-k, and the main
// attention — dense in the warm-up, over the selected tokens (NSA's selected branch with one-token
// blocks, tokenSelectionAsNsa) in the sparse phase; then the indexer's KL loss and its backward
// into dqI, dkI, dwI, and in the sparse phase the main attention's backward into dq, dk, dv. In the
// warm-up the main model is frozen: no main backward runs. Layouts: q [B,T,H,dk], k/v
// [B,T,G,dk|dv], out [B,T,H,dv], lse [B,H,T], qI [B,T,H_I,d_I], kI [B,T,d_I], wI [B,T,H_I].
import { type DsaConfig, type DsaPhase, tokenSelectionAsNsa } from '../../definitions/dsa-config';
import type { AttentionShape } from '../../definitions/shapes';
import type { BufferSlice, PlaceTensor } from '../../gpu/arena';
import type { Dispatch, GpuContext } from '../../gpu/context';
import { attentionForwardDispatch } from '../../kernels/attention';
import { dsaIndexBackwardDispatches } from '../../kernels/dsa-index-backward';
import { dsaIndexLossDispatch } from '../../kernels/dsa-index-loss';
import { dsaIndexScoresDispatch } from '../../kernels/dsa-index-scores';
import { dsaTopKDispatch } from '../../kernels/dsa-topk';
import { type NsaAttnVariant, nsaBranchBackwardDispatches, nsaBranchForwardDispatch } from '../../kernels/nsa-attention';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths, type NsaReverseIndexSlices } from '../../kernels/nsa-reverse-index';

/** What the forward keeps for the backward, the loss report and the stepper. */
export interface DsaSaved {
  /** Index scores [B, T, T]. */
  scores: BufferSlice;
  /** int32 [B, T, G, k], every group's row equal. */
  sel: BufferSlice;
}

/** Backward scratch, shareable by all layers: the selection's reverse index, dScores, klRows. */
export interface DsaScratch {
  reverse: NsaReverseIndexSlices;
  /** [B, T, max(T, k)]: the indexer loss gradient by slot. */
  dScores: BufferSlice;
  /** [B, T]: KL per query row (unweighted). */
  klRows: BufferSlice;
}

export function dsaSavedTensors(place: PlaceTensor, prefix: string, s: AttentionShape, c: DsaConfig): DsaSaved {
  return { scores: place(`${prefix}scores`, s.B * s.T * s.T), sel: place(`${prefix}sel`, s.B * s.T * s.G * c.topK) };
}

export function dsaScratchTensors(place: PlaceTensor, prefix: string, s: AttentionShape, c: DsaConfig): DsaScratch {
  const r = nsaReverseIndexLengths(s, tokenSelectionAsNsa(c.topK));
  return {
    reverse: {
      counts: place(`${prefix}rev.counts`, r.counts),
      offsets: place(`${prefix}rev.offsets`, r.offsets),
      queries: place(`${prefix}rev.queries`, r.queries),
    },
    dScores: place(`${prefix}dScores`, s.B * s.T * Math.max(s.T, c.topK)),
    klRows: place(`${prefix}klRows`, s.B * s.T),
  };
}

export interface DsaIO {
  q: BufferSlice;
  k: BufferSlice;
  v: BufferSlice;
  out: BufferSlice;
  lse: BufferSlice;
  qI: BufferSlice;
  kI: BufferSlice;
  wI: BufferSlice;
  saved: DsaSaved;
  kernels?: NsaAttnVariant;
  /** Sparse phase, debug: u32 [B,T,G], the main K/V rows each group read (docs/dsa-spec.md section 7). */
  keysRead?: BufferSlice;
}

/** scores → top-k → main attention (dense in the warm-up, over the selection when sparse). */
export async function dsaForwardDispatches(
  gpu: GpuContext,
  cfg: DsaConfig,
  s: AttentionShape,
  phase: DsaPhase,
  io: DsaIO,
): Promise<Dispatch[]> {
  const shape = { ...s, cfg };
  const { scores, sel } = io.saved;
  const main = { ...s, q: io.q, k: io.k, v: io.v, out: io.out, lse: io.lse };
  return Promise.all([
    dsaIndexScoresDispatch(gpu, { ...shape, qI: io.qI, kI: io.kI, wI: io.wI, scores }),
    dsaTopKDispatch(gpu, { ...shape, scores, sel }),
    phase === 'warmup'
      ? attentionForwardDispatch(gpu, main)
      : // The selected branch's forward, counting the rows read when keysRead is given.
        nsaBranchForwardDispatch(
          gpu,
          { ...main, branch: 'sel', cfg: tokenSelectionAsNsa(cfg.topK), sel, variant: io.kernels },
          io.keysRead,
        ),
  ]);
}

export interface DsaGrads {
  /** λ / (B·T). */
  gradScale: number;
  /** Overwritten: the indexer's gradients. */
  dqI: BufferSlice;
  dkI: BufferSlice;
  dwI: BufferSlice;
  /** Sparse phase: the main gradient in, dq/dk/dv out (overwritten); delta scratch [B,H,T]. */
  main?: {
    dout: BufferSlice;
    delta: BufferSlice;
    dq: BufferSlice;
    dk: BufferSlice;
    dv: BufferSlice;
    headParts?: { k: BufferSlice; v: BufferSlice };
  };
}

/**
 * The reverse index of the selection, the indexer loss and backward (both phases), then the main
 * backward (sparse phase only; the warm-up freezes the main model).
 */
export async function dsaBackwardDispatches(
  gpu: GpuContext,
  cfg: DsaConfig,
  s: AttentionShape,
  phase: DsaPhase,
  io: DsaIO,
  scratch: DsaScratch,
  g: DsaGrads,
): Promise<Dispatch[]> {
  const shape = { ...s, cfg };
  const { scores, sel } = io.saved;
  const tokens = tokenSelectionAsNsa(cfg.topK);
  const list: Promise<Dispatch | Dispatch[]>[] = [
    nsaReverseIndexDispatches(gpu, { ...s, cfg: tokens, sel, reverse: scratch.reverse }),
    dsaIndexLossDispatch(gpu, {
      ...shape,
      phase,
      gradScale: g.gradScale,
      q: io.q,
      k: io.k,
      lse: io.lse,
      scores,
      sel,
      dScores: scratch.dScores,
      klRows: scratch.klRows,
    }),
    dsaIndexBackwardDispatches(gpu, {
      ...shape,
      phase,
      qI: io.qI,
      kI: io.kI,
      wI: io.wI,
      dScores: scratch.dScores,
      sel,
      reverse: scratch.reverse.queries,
      dqI: g.dqI,
      dwI: g.dwI,
      dkI: g.dkI,
    }),
  ];
  if (phase === 'sparse') {
    const m = g.main;
    if (!m) throw new Error('dsa backward: the sparse phase needs the main gradient (dout, delta, dq, dk, dv)');
    list.push(
      nsaBranchBackwardDispatches(gpu, {
        ...s,
        branch: 'sel',
        cfg: tokens,
        sel,
        reverse: scratch.reverse,
        accumulateQ: false,
        variant: io.kernels,
        q: io.q,
        k: io.k,
        v: io.v,
        out: io.out,
        lse: io.lse,
        dout: m.dout,
        delta: m.delta,
        gradQ: m.dq,
        gradK: m.dk,
        gradV: m.dv,
        headParts: m.headParts,
      }),
    );
  }
  return (await Promise.all(list)).flat();
}
