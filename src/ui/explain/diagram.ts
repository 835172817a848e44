// The "How NSA works" diagram's content for one query t of the current config: which compressed
// blocks it sees, which selection blocks are candidates, forced or (as an example) picked by
// score, and the window — all from the spec's block arithmetic (src/definitions/nsa-blocks.ts).
import { forcedBlocks, numSelCandidates, visibleCmpBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig } from '../../definitions/nsa-config';
import { type KeyReads, keyReads } from '../config/derived';

export type SelBlockRole = 'forced' | 'example' | 'candidate';

export interface ExplainBlock {
  /** First token. */
  start: number;
  /** One past the last token (clipped to t + 1 for the selection and window). */
  end: number;
}

export interface ExplainSelBlock extends ExplainBlock {
  index: number;
  role: SelBlockRole;
}

export interface ExplainDiagram {
  T: number;
  t: number;
  /** Compressed blocks query t sees: [k·d, k·d + l) for k < ncmp(t). */
  cmp: ExplainBlock[];
  /** Selection candidates j ≤ ⌊t/l′⌋ with their role. */
  sel: ExplainSelBlock[];
  /** Blocks picked by score in the example (n minus the forced ones, at most the candidates left). */
  pickedByScore: number;
  window: ExplainBlock;
  reads: KeyReads;
}

/**
 * The diagram of query t. The blocks "picked by score" depend on the trained model; the example
 * spreads them evenly over the unforced candidates, and the panel labels them as an example.
 */
export function explainDiagram(T: number, t: number, c: NsaConfig): ExplainDiagram {
  if (!(Number.isInteger(t) && t >= 0 && t < T)) throw new Error(`query t = ${t} outside [0, ${T})`);
  const cmp: ExplainBlock[] = [];
  for (let k = 0; k < visibleCmpBlocks(t, c); k++) cmp.push({ start: k * c.d, end: k * c.d + c.l });
  const nb = numSelCandidates(t, c);
  const forced = new Set(forcedBlocks(t, c));
  const free = [...Array(nb).keys()].filter((j) => !forced.has(j));
  const pickedByScore = Math.max(0, Math.min(c.nSel - forced.size, free.length));
  const example = new Set<number>();
  for (let i = 0; i < pickedByScore; i++) example.add(free[Math.floor(((i + 0.5) * free.length) / pickedByScore)]);
  const sel: ExplainSelBlock[] = [];
  for (let j = 0; j < nb; j++) {
    const role: SelBlockRole = forced.has(j) ? 'forced' : example.has(j) ? 'example' : 'candidate';
    sel.push({ index: j, start: j * c.lSel, end: Math.min((j + 1) * c.lSel, t + 1), role });
  }
  return { T, t, cmp, sel, pickedByScore, window: { start: Math.max(0, t - c.w + 1), end: t + 1 }, reads: keyReads(t, c) };
}
