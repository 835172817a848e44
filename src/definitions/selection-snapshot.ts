// What the selection stepper shows: one (layer, group) of one sequence, the blocks each query
// position selected and the group scores P behind the choice — captured from a training step
// (src/model/nsa/snapshot-read.ts reads it from the GPU) or from CPU decoding (decodeTraceSnapshots).
// Pure data and arithmetic: the page imports this file, the worker the reader.
import { tokenSelectionAsNsa } from './dsa-config';
import { mobaAsNsa } from './mechanisms';
import type { ModelConfig } from './model-config';
import { forcedBlocks, numSelBlocks } from './nsa-blocks';
import type { NsaConfig } from './nsa-config';
import { selectionRanges } from './nsa-ranges';

export interface SelectionSnapshot {
  /** Training step the activations belong to (for a decode snapshot: the step of the weights). */
  step: number;
  layer: number;
  group: number;
  /** Query positions covered: rows 0..T−1. */
  T: number;
  cfg: NsaConfig;
  /** Query heads and KV groups of the model. */
  H: number;
  G: number;
  /** [T] the sequence (batch row 0 of the step's last forward, or the decoded tokens). */
  tokens: Int32Array;
  /** [T, nSel] selected blocks per query, ascending, −1 padded. */
  sel: Int32Array;
  /** [T, nBlocks] group scores P (nBlocks = numSelBlocks(T)); null when not recorded (decoding). */
  scores: Float32Array | null;
  /** [T, H/G, 3] gates (cmp, sel, win) of the group's heads, when recorded. */
  gates?: Float32Array;
  /**
   * The attention whose selection this is (absent: 'nsa'). MoBA's cfg is mobaAsNsa (blocks of B,
   * its own block forced, scores P over the block means); DSA's is tokenSelectionAsNsa (one-token
   * blocks, nothing forced, scores = the index scores I[t, s], the same for every group).
   */
  mechanism?: SnapshotMechanism;
  /** DSA: the step's phase; in the warm-up the main attention read every earlier token and `sel` is the indexer's pick. */
  phase?: 'warmup' | 'sparse';
  /** 'train' (default): read from a training step; 'decode': recorded while generating. */
  source?: 'train' | 'decode';
  /**
   * [T] 1 where row t was recorded (absent: every row). A decode trace may lack the prompt's
   * rows; their sel entries are −1 and nothing is drawn or checked for them.
   */
  recorded?: Uint8Array;
}

/** Attentions with a selection to show: NSA's blocks, MoBA's blocks, DSA's tokens. */
export type SnapshotMechanism = 'nsa' | 'moba' | 'dsa';

/**
 * The selection config a model's snapshots are drawn with and their mechanism: NSA's own, MoBA's
 * as NSA (mobaAsNsa), DSA's tokens as one-token blocks (tokenSelectionAsNsa); null for attentions
 * without a selection (dense, the window).
 */
export function snapshotSelectionOf(c: ModelConfig): { cfg: NsaConfig; mechanism: SnapshotMechanism } | null {
  if (c.attention === 'nsa' && c.nsa) return { cfg: c.nsa, mechanism: 'nsa' };
  if (c.attention === 'moba' && c.moba) return { cfg: mobaAsNsa(c.moba), mechanism: 'moba' };
  if (c.attention === 'dsa' && c.dsa) return { cfg: tokenSelectionAsNsa(c.dsa.topK), mechanism: 'dsa' };
  return null;
}

/** The snapshot's mechanism ('nsa' when absent). */
export const snapshotMechanism = (s: Pick<SelectionSnapshot, 'mechanism'>): SnapshotMechanism => s.mechanism ?? 'nsa';

export interface SnapshotRange {
  /** Half-open token range [start, end), 0 ≤ start < end ≤ t + 1. */
  start: number;
  end: number;
  /** The selected blocks merged into this range, ascending. */
  blocks: number[];
  /** Per block of `blocks`: whether it is one of the spec's forced blocks for t. */
  forced: boolean[];
}

/** Selection blocks of the snapshot's sequence (heatmap columns). */
export function snapshotBlocks(s: SelectionSnapshot): number {
  return numSelBlocks(s.T, s.cfg);
}

/** Checks every array length against T, nSel, nBlocks and H/G; throws naming the first mismatch. */
export function checkSnapshot(s: SelectionSnapshot): void {
  const { T, cfg, H, G } = s;
  const bad = (what: string) => {
    throw new Error(`selection snapshot (step ${s.step}, layer ${s.layer}, group ${s.group}): ${what}`);
  };
  if (!(Number.isInteger(T) && T >= 0)) bad(`T = ${T} is not an integer ≥ 0`);
  if (!(Number.isInteger(H) && Number.isInteger(G) && G >= 1 && H >= G && H % G === 0)) bad(`H = ${H} is not a multiple of G = ${G}`);
  if (!(Number.isInteger(s.group) && s.group >= 0 && s.group < G)) bad(`group ${s.group} outside [0, ${G})`);
  if (s.tokens.length !== T) bad(`tokens has ${s.tokens.length} entries, expected T = ${T}`);
  if (s.sel.length !== T * cfg.nSel) bad(`sel has ${s.sel.length} entries, expected T·nSel = ${T * cfg.nSel}`);
  const nb = numSelBlocks(T, cfg);
  if (s.scores && s.scores.length !== T * nb) bad(`scores has ${s.scores.length} entries, expected T·nBlocks = ${T * nb}`);
  if (s.gates && s.gates.length !== T * (H / G) * 3) bad(`gates has ${s.gates.length} entries, expected T·(H/G)·3 = ${T * (H / G) * 3}`);
  if (s.recorded && s.recorded.length !== T) bad(`recorded has ${s.recorded.length} entries, expected T = ${T}`);
}

/** Whether query row t holds a recorded selection. */
export function rowRecorded(s: SelectionSnapshot, t: number): boolean {
  return !s.recorded || s.recorded[t] === 1;
}

/** The selection row of query t (a view, [nSel]). */
export function selectionRow(s: SelectionSnapshot, t: number): Int32Array {
  if (!(Number.isInteger(t) && t >= 0 && t < s.T)) throw new Error(`query position ${t} outside [0, ${s.T})`);
  return s.sel.subarray(t * s.cfg.nSel, (t + 1) * s.cfg.nSel);
}

/** The group scores of query t over all blocks (a view, [nBlocks]), or null when not recorded. */
export function scoreRow(s: SelectionSnapshot, t: number): Float32Array | null {
  if (!s.scores) return null;
  const nb = snapshotBlocks(s);
  return s.scores.subarray(t * nb, (t + 1) * nb);
}

/**
 * Query t's selection merged into ranges (selectionRanges: throws on an invalid selection, never
 * clamps), each with its blocks and which of them are forced.
 */
export function snapshotRanges(s: SelectionSnapshot, t: number): SnapshotRange[] {
  if (!rowRecorded(s, t)) throw new Error(`query row ${t} was not recorded`);
  return rowRanges(selectionRow(s, t), t, s.cfg);
}

/** One selection row's ranges for query t, with blocks and forced flags. */
export function rowRanges(row: ArrayLike<number>, t: number, cfg: NsaConfig): SnapshotRange[] {
  const ranges = selectionRanges(row, t, cfg);
  const forced = new Set(forcedBlocks(t, cfg));
  const blocks = Array.from(row).filter((j) => j >= 0);
  return ranges.map(([start, end]) => {
    const inRange = blocks.filter((j) => j * cfg.lSel >= start && j * cfg.lSel < end);
    return { start, end, blocks: inRange, forced: inRange.map((j) => forced.has(j)) };
  });
}

/** Problems of every query row (invalid selection or a forced candidate missing), for display. */
export function snapshotIssues(s: SelectionSnapshot): Array<{ t: number; message: string }> {
  const out: Array<{ t: number; message: string }> = [];
  for (let t = 0; t < s.T; t++) {
    if (!rowRecorded(s, t)) continue;
    try {
      const row = selectionRow(s, t);
      selectionRanges(row, t, s.cfg);
      const have = new Set(row);
      const missing = forcedBlocks(t, s.cfg).filter((j) => !have.has(j));
      if (missing.length) out.push({ t, message: `forced block${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not selected` });
    } catch (e) {
      out.push({ t, message: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

// ---- Decoding -----------------------------------------------------------------------------------

/** The blocks one (layer, group) selected for the query at position t while decoding. */
export interface DecodeSelection {
  t: number;
  layer: number;
  group: number;
  /** Ascending, −1 padded ([nSel]), as the decoder returned them. */
  blocks: number[];
  /** Group scores P over the candidates nb(t), when the decoder exposes them. */
  scores?: number[];
  /** Gates [H/G, 3] of the group's heads, when recorded. */
  gates?: number[];
}

/** Structural view of one decoder step (src/reference/decoder.ts DecodeStep). */
export interface DecodeStepLike {
  t: number;
  nsa: ReadonlyArray<{ layer: number; selection: ArrayLike<number>; scores?: ArrayLike<number>; gates?: ArrayLike<number> }>;
}

/** Splits one decoder step into its per-(layer, group) selections. */
export function decodeSelectionsOf(step: DecodeStepLike, cfg: NsaConfig, H: number, G: number): DecodeSelection[] {
  const nb = Math.floor(step.t / cfg.lSel) + 1;
  const hpg = H / G;
  const out: DecodeSelection[] = [];
  for (const L of step.nsa) {
    if (L.selection.length !== G * cfg.nSel)
      throw new Error(
        `decode step t=${step.t} layer ${L.layer}: selection has ${L.selection.length} entries, expected G·nSel = ${G * cfg.nSel}`,
      );
    for (let g = 0; g < G; g++) {
      const d: DecodeSelection = {
        t: step.t,
        layer: L.layer,
        group: g,
        blocks: Array.from(L.selection).slice(g * cfg.nSel, (g + 1) * cfg.nSel),
      };
      if (L.scores) d.scores = Array.from(L.scores).slice(g * nb, (g + 1) * nb);
      if (L.gates) d.gates = Array.from(L.gates).slice(g * hpg * 3, (g + 1) * hpg * 3);
      out.push(d);
    }
  }
  return out;
}

/** Per-layer selections [G·nSel] of query t (index = layer, as the worker streams them) split by group. */
export function selectionsFromLayers(t: number, perLayer: ReadonlyArray<ArrayLike<number>>, cfg: NsaConfig, G: number): DecodeSelection[] {
  return decodeSelectionsOf({ t, nsa: perLayer.map((selection, layer) => ({ layer, selection })) }, cfg, G, G);
}

/** A decoded token's ranges (same rules and errors as snapshotRanges). */
export function decodeSelectionRanges(d: DecodeSelection, cfg: NsaConfig): SnapshotRange[] {
  if (d.blocks.length !== cfg.nSel) throw new Error(`decode selection t=${d.t}: ${d.blocks.length} blocks, expected nSel = ${cfg.nSel}`);
  return rowRanges(d.blocks, d.t, cfg);
}

/** Everything one generation fed through the decoder: tokens[t] and the selections of query t. */
export interface DecodeTrace {
  /** Tokens fed, positions 0..T−1 (prompt then generated; the last sampled token is never fed). */
  tokens: readonly number[];
  /** Per recorded position t, one entry per (layer, group); positions may be missing (see recorded). */
  selections: readonly DecodeSelection[];
}

/**
 * One SelectionSnapshot per (layer, group) of a decode trace, rows 0..T−1, source 'decode'. Rows
 * with no selection (e.g. the prompt's, when only generated tokens were streamed) are marked
 * unrecorded. Throws on a selection recorded twice or outside [0, T). Scores and gates are kept
 * only when every recorded row has them.
 */
export function decodeTraceSnapshots(
  trace: DecodeTrace,
  o: { cfg: NsaConfig; H: number; G: number; layers: number; step: number },
): SelectionSnapshot[] {
  const { cfg, H, G } = o;
  const T = trace.tokens.length;
  const nb = numSelBlocks(T, cfg);
  const hpg = H / G;
  const grid = new Map<string, DecodeSelection>();
  for (const d of trace.selections) {
    if (!(Number.isInteger(d.t) && d.t >= 0 && d.t < T)) throw new Error(`decode trace: selection at t=${d.t} outside the ${T} tokens fed`);
    if (!(d.layer >= 0 && d.layer < o.layers && d.group >= 0 && d.group < G))
      throw new Error(`decode trace: layer ${d.layer} / group ${d.group} outside the model`);
    if (d.blocks.length !== cfg.nSel) throw new Error(`decode trace t=${d.t}: ${d.blocks.length} blocks, expected nSel = ${cfg.nSel}`);
    const key = `${d.layer}/${d.group}/${d.t}`;
    if (grid.has(key)) throw new Error(`decode trace: selection of layer ${d.layer}, group ${d.group}, t=${d.t} recorded twice`);
    grid.set(key, d);
  }
  const out: SelectionSnapshot[] = [];
  for (let layer = 0; layer < o.layers; layer++) {
    for (let group = 0; group < G; group++) {
      const sel = new Int32Array(T * cfg.nSel).fill(-1);
      const recorded = new Uint8Array(T);
      const rows: DecodeSelection[] = [];
      for (let t = 0; t < T; t++) {
        const d = grid.get(`${layer}/${group}/${t}`);
        if (!d) continue;
        sel.set(d.blocks, t * cfg.nSel);
        recorded[t] = 1;
        rows.push(d);
      }
      const snap: SelectionSnapshot = {
        step: o.step,
        layer,
        group,
        T,
        cfg,
        H,
        G,
        tokens: Int32Array.from(trace.tokens),
        sel,
        scores: null,
        source: 'decode',
      };
      if (rows.length < T) snap.recorded = recorded;
      if (rows.length > 0 && rows.every((d) => d.scores)) {
        // Candidates only (nb(t) per row); later blocks are not candidates and score 0.
        const scores = new Float32Array(T * nb);
        for (const d of rows) scores.set(d.scores!.slice(0, nb), d.t * nb);
        snap.scores = scores;
      }
      if (rows.length > 0 && rows.every((d) => d.gates && d.gates.length === hpg * 3)) {
        const gates = new Float32Array(T * hpg * 3);
        for (const d of rows) gates.set(d.gates!, d.t * hpg * 3);
        snap.gates = gates;
      }
      out.push(snap);
    }
  }
  return out;
}
