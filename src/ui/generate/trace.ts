// From a streamed generation to what the stepper shows: the decode trace (tokens fed and the
// selection of every query that produced a token), its snapshots, and one token's ranges.
import { dsaIndexKeysRead, dsaKeysRead } from '../../definitions/dsa-config';
import type { NsaConfig } from '../../definitions/nsa-config';
import {
  decodeSelectionRanges,
  type DecodeTrace,
  decodeTraceSnapshots,
  selectionsFromLayers,
  type SelectionSnapshot,
  type SnapshotRange,
} from '../../definitions/selection-snapshot';
import type { GeneratedPiece, GenerationModel, GenerationStart } from './types';

/**
 * Tokens fed to the decoder (the prompt, then every generated token but the last, which nothing
 * read yet) and the selections of the queries that produced the generated tokens.
 */
export function generationTrace(start: GenerationStart, pieces: readonly GeneratedPiece[], nsa: NsaConfig, G: number): DecodeTrace {
  const P = start.promptTokens.length;
  pieces.forEach((p, i) => {
    if (p.index !== i || p.t !== P - 1 + i)
      throw new Error(`generated token ${i}: index ${p.index}, query t = ${p.t}; expected index ${i}, t = ${P - 1 + i}`);
  });
  const tokens = [...start.promptTokens, ...pieces.slice(0, Math.max(0, pieces.length - 1)).map((p) => p.token)];
  return { tokens, selections: pieces.flatMap((p) => selectionsFromLayers(p.t, p.selection, nsa, G)) };
}

/** One snapshot per (layer, group) of the generation so far (source 'decode'). */
export function generationSnapshots(
  start: GenerationStart,
  pieces: readonly GeneratedPiece[],
  m: GenerationModel & { nsa: NsaConfig },
  step: number,
): SelectionSnapshot[] {
  return decodeTraceSnapshots(generationTrace(start, pieces, m.nsa, m.G), { cfg: m.nsa, H: m.H, G: m.G, layers: m.layers, step });
}

export interface PieceRanges {
  layer: number;
  group: number;
  ranges: SnapshotRange[];
}

/** The ranges the query of one generated token selected, per (layer, group); throws on an invalid selection. */
export function pieceRanges(p: GeneratedPiece, nsa: NsaConfig, G: number): PieceRanges[] {
  if (p.selection.length === 0) return [];
  return selectionsFromLayers(p.t, p.selection, nsa, G).map((d) => ({
    layer: d.layer,
    group: d.group,
    ranges: decodeSelectionRanges(d, nsa),
  }));
}

/** DSA: the tokens one layer's query attended (every group's row is the same) and what it read. */
export interface PieceTokens {
  layer: number;
  /** Selected positions, ascending. */
  tokens: number[];
  /** Main K/V rows read per group: min(k, t + 1) (docs/dsa-spec.md section 7). */
  keysRead: number;
  /** Indexer key rows the layer scored: t + 1. */
  indexKeysRead: number;
}

/**
 * The tokens the query of one generated token attended in every layer of a DSA model; throws on an
 * invalid selection (groups differing, not ascending, a position past t, not min(k, t + 1) of them).
 */
export function pieceTokens(p: GeneratedPiece, topK: number, G: number): PieceTokens[] {
  return p.selection.map((row, layer) => {
    if (row.length !== G * topK) throw new Error(`layer ${layer}: ${row.length} selection entries, expected ${G}·${topK}`);
    const first = Array.from({ length: topK }, (_, m) => row[m]);
    for (let g = 1; g < G; g++)
      for (let m = 0; m < topK; m++)
        if (row[g * topK + m] !== first[m]) throw new Error(`layer ${layer}: group ${g}'s tokens differ from group 0's`);
    const tokens = first.filter((s) => s >= 0);
    tokens.forEach((s, i) => {
      if (s > p.t) throw new Error(`layer ${layer}: token ${s} is after the query t = ${p.t}`);
      if (i > 0 && s <= tokens[i - 1]) throw new Error(`layer ${layer}: tokens not ascending (${tokens[i - 1]}, ${s})`);
    });
    const keysRead = dsaKeysRead(p.t, topK);
    if (tokens.length !== keysRead)
      throw new Error(`layer ${layer}: ${tokens.length} tokens selected, expected min(k, t + 1) = ${keysRead}`);
    return { layer, tokens, keysRead, indexKeysRead: dsaIndexKeysRead(p.t) };
  });
}
