// Reads selection snapshots from a model plan's activations (worker side; never on a training
// step's hot path): NSA's, MoBA's (as its NSA config) and DSA's (tokens as one-token blocks). Batch row 0 of a layer's selection [B,T,G,nSel], scores [B,T,G,nBlocks] and
// gates [B,T,H,3] is one contiguous prefix of each tensor: only that prefix is copied
// (ModelPlan.readSelection).
// The activations hold the last forward that ran (the step's last micro-batch, or an eval forward
// if one ran after it): the caller passes that forward's row-0 tokens.
import { dsaPhaseAt } from '../../definitions/dsa-params';
import { numSelBlocks } from '../../definitions/nsa-blocks';
import { type SelectionSnapshot, snapshotSelectionOf } from '../../definitions/selection-snapshot';
import type { GpuContext } from '../../gpu/context';
import type { ModelPlan } from '../plan';

export interface SnapshotReadOptions {
  step: number;
  /** Row 0 of the batch whose forward the activations hold ([T]). */
  tokens: Int32Array;
  /** Layers to read (default: all). */
  layers?: readonly number[];
}

/**
 * Every (layer, group) snapshot of row 0: the reads per layer split by group on the CPU. NSA and
 * MoBA scores are per group [T, G, nb]; DSA's index scores [T, T] are one per query, copied to every
 * group (its selection is the same in every group). Only NSA has gates.
 */
export async function readSelectionSnapshots(gpu: GpuContext, plan: ModelPlan, o: SnapshotReadOptions): Promise<SelectionSnapshot[]> {
  const c = plan.config;
  const which = snapshotSelectionOf(c);
  if (!which) throw new Error(`selection snapshots need an NSA, MoBA or DSA model (config.attention is ${c.attention})`);
  const { cfg, mechanism } = which;
  const { T } = plan.shape;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const hpg = H / G;
  const nSel = cfg.nSel;
  const nb = numSelBlocks(T, cfg);
  const perGroupScores = mechanism !== 'dsa';
  if (o.tokens.length !== T) throw new Error(`snapshot tokens: ${o.tokens.length} given, the plan's sequence length is ${T}`);
  const layers = o.layers ?? Array.from({ length: c.nLayers }, (_, l) => l);
  const out: SelectionSnapshot[] = [];
  for (const l of layers) {
    if (!(Number.isInteger(l) && l >= 0 && l < c.nLayers)) throw new Error(`layer ${l} outside [0, ${c.nLayers})`);
    const { sel, scores, gates } = await plan.readSelection(l, T);
    for (let g = 0; g < G; g++) {
      const s: SelectionSnapshot = {
        step: o.step,
        layer: l,
        group: g,
        T,
        cfg: { ...cfg },
        H,
        G,
        tokens: Int32Array.from(o.tokens),
        sel: new Int32Array(T * nSel),
        scores: new Float32Array(T * nb),
        source: 'train',
      };
      if (mechanism !== 'nsa') s.mechanism = mechanism;
      if (mechanism === 'dsa' && c.dsa && Number.isInteger(o.step) && o.step >= 0) s.phase = dsaPhaseAt(o.step, c.dsa);
      if (mechanism === 'nsa') s.gates = new Float32Array(T * hpg * 3);
      for (let t = 0; t < T; t++) {
        s.sel.set(sel.subarray((t * G + g) * nSel, (t * G + g + 1) * nSel), t * nSel);
        const row = perGroupScores ? t * G + g : t;
        s.scores!.set(scores.subarray(row * nb, (row + 1) * nb), t * nb);
        if (s.gates) s.gates.set(gates.subarray((t * H + g * hpg) * 3, (t * H + (g + 1) * hpg) * 3), t * hpg * 3);
      }
      out.push(s);
    }
  }
  return out;
}

/** One (layer, group) snapshot of row 0. */
export async function readSelectionSnapshot(
  gpu: GpuContext,
  plan: ModelPlan,
  o: { step: number; layer: number; group: number; tokens: Int32Array },
): Promise<SelectionSnapshot> {
  const G = plan.config.nKvGroups;
  if (!(Number.isInteger(o.group) && o.group >= 0 && o.group < G)) throw new Error(`group ${o.group} outside [0, ${G})`);
  const all = await readSelectionSnapshots(gpu, plan, { step: o.step, tokens: o.tokens, layers: [o.layer] });
  return all[o.group];
}
