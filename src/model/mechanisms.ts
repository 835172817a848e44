// The window and MoBA layers on the GPU (docs/nsa-spec.md section 15), built from the NSA kernels
// with only the pieces each mechanism uses: window = the window branch kernel alone; MoBA = φ = avg
// compression of K only (the block means), the selection scores, the top-n and the selected
// branch (backward: the reverse index and the selected branch; no gradient through the means).
// Their output is the layer's attention output and lse directly (no gates, no mix). Layout as the
// NSA core: q [B,T,H,dk], k/v [B,T,G,dk|dv], out [B,T,H,dv], lse [B,H,T].
import { attentionNsaConfig, mobaAsNsa, type MobaConfig } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { numCmpBlocks, numSelBlocks } from '../definitions/nsa-blocks';
import type { NsaConfig } from '../definitions/nsa-config';
import type { AttentionShape } from '../definitions/shapes';
import type { BufferSlice, PlaceTensor } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { type NsaAttnVariant, nsaBranchBackwardDispatches, nsaBranchForwardDispatch } from '../kernels/nsa-attention';
import { compressAvgForwardDispatch } from '../kernels/nsa-compress';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths, type NsaReverseIndexSlices } from '../kernels/nsa-reverse-index';
import { selectionScoresDispatch, topNSelectionDispatch } from '../kernels/nsa-select';

/** MoBA's forward tensors kept for the backward and the stepper: block means, group scores, selection. */
export interface MobaSaved {
  /** Block means [B, nMeans, G, dk]. */
  means: BufferSlice;
  /** Group scores [B, T, G, nBlocks]. */
  scores: BufferSlice;
  /** int32 [B, T, G, topK]. */
  sel: BufferSlice;
}

/** Whether a model's attention is one of this file's mechanisms. */
export const isMechanism = (c: ModelConfig): c is ModelConfig & { attention: 'window' | 'moba' } =>
  c.attention === 'window' || c.attention === 'moba';

/** The NSA config whose kernels compute the model's window or MoBA attention. */
export function mechanismNsaConfig(c: ModelConfig): NsaConfig {
  const cfg = isMechanism(c) ? attentionNsaConfig(c) : undefined;
  if (!cfg) throw new Error(`mechanismNsaConfig: attention '${c.attention}' is not a window or MoBA layer with its options`);
  return cfg;
}

/** One MoBA layer's saved tensors, placed as `${prefix}${field}`. */
export function mobaSavedTensors(place: PlaceTensor, prefix: string, s: AttentionShape, m: MobaConfig): MobaSaved {
  const cfg = mobaAsNsa(m);
  return {
    means: place(`${prefix}means`, s.B * numCmpBlocks(s.T, cfg) * s.G * s.dk),
    scores: place(`${prefix}scores`, s.B * s.T * s.G * numSelBlocks(s.T, cfg)),
    sel: place(`${prefix}sel`, s.B * s.T * s.G * m.topK),
  };
}

/** MoBA's backward scratch (the selected branch's reverse index), shareable by all layers. */
export function mobaScratchTensors(place: PlaceTensor, prefix: string, s: AttentionShape, m: MobaConfig): NsaReverseIndexSlices {
  const r = nsaReverseIndexLengths(s, mobaAsNsa(m));
  return {
    counts: place(`${prefix}rev.counts`, r.counts),
    offsets: place(`${prefix}rev.offsets`, r.offsets),
    queries: place(`${prefix}rev.queries`, r.queries),
  };
}

export interface MechanismIO {
  q: BufferSlice;
  k: BufferSlice;
  v: BufferSlice;
  out: BufferSlice;
  lse: BufferSlice;
  /** MoBA only. */
  moba?: MobaSaved;
  kernels?: NsaAttnVariant;
}

function mobaSaved(io: MechanismIO): MobaSaved {
  if (!io.moba) throw new Error('moba layer: the saved means, scores and selection are missing');
  return io.moba;
}

/** Forward dispatches: window → the window branch; MoBA → means → scores → top-k → selected branch. */
export async function mechanismForward(gpu: GpuContext, c: ModelConfig, s: AttentionShape, io: MechanismIO): Promise<Dispatch[]> {
  const cfg = mechanismNsaConfig(c);
  const { B, T, H, G, dk, dv } = s;
  const attend = { cfg, B, T, H, G, dk, dv, q: io.q, k: io.k, v: io.v, out: io.out, lse: io.lse, variant: io.kernels };
  if (c.attention === 'window') return [await nsaBranchForwardDispatch(gpu, { ...attend, branch: 'win' })];
  const m = mobaSaved(io);
  return Promise.all([
    compressAvgForwardDispatch(gpu, { x: io.k, out: m.means, B, T, G, D: dk, cfg }),
    selectionScoresDispatch(gpu, { q: io.q, kc: m.means, scores: m.scores, B, T, H, G, dk, cfg, variant: io.kernels }),
    topNSelectionDispatch(gpu, { scores: m.scores, sel: m.sel, B, T, G, cfg }),
    nsaBranchForwardDispatch(gpu, { ...attend, branch: 'sel', sel: m.sel }),
  ]);
}

export interface MechanismGrads {
  dout: BufferSlice;
  delta: BufferSlice;
  /** Overwritten. */
  dq: BufferSlice;
  dk: BufferSlice;
  dv: BufferSlice;
  /** H > G: each head's part of dK, dV [B, T, H, dk|dv]. */
  headParts?: { k: BufferSlice; v: BufferSlice };
  /** MoBA: the reverse index. */
  reverse?: NsaReverseIndexSlices;
}

/** Backward dispatches: window → the window branch's; MoBA → reverse index → the selected branch's. */
export async function mechanismBackward(
  gpu: GpuContext,
  c: ModelConfig,
  s: AttentionShape,
  io: MechanismIO,
  gr: MechanismGrads,
): Promise<Dispatch[]> {
  const cfg = mechanismNsaConfig(c);
  const { B, T, H, G, dk, dv } = s;
  const args = {
    cfg,
    B,
    T,
    H,
    G,
    dk,
    dv,
    q: io.q,
    k: io.k,
    v: io.v,
    out: io.out,
    lse: io.lse,
    dout: gr.dout,
    delta: gr.delta,
    gradQ: gr.dq,
    gradK: gr.dk,
    gradV: gr.dv,
    headParts: gr.headParts,
    variant: io.kernels,
    accumulateQ: false,
  };
  if (c.attention === 'window') return nsaBranchBackwardDispatches(gpu, { ...args, branch: 'win' });
  const m = mobaSaved(io);
  if (!gr.reverse) throw new Error('moba layer: the reverse index scratch is missing');
  const list = await Promise.all([
    nsaReverseIndexDispatches(gpu, { B, T, H, G, dk, dv, cfg, sel: m.sel, reverse: gr.reverse }),
    nsaBranchBackwardDispatches(gpu, { ...args, branch: 'sel', sel: m.sel, reverse: gr.reverse }),
  ]);
  return list.flat();
}
