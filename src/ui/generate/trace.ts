// From a streamed generation to what the stepper shows: the decode trace (tokens fed and the
// selection of every query that produced a token), its snapshots, and one token's ranges.
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
