// What the tooltip says about one heatmap cell (query t, block j). Pure, tested in Node.
import { rowRecorded, scoreRow, selectionRow, type SelectionSnapshot, snapshotMechanism } from '../../definitions/selection-snapshot';
import { type CellKind, cellKind, cmpFrontier, windowBlocks } from './geometry';

export interface CellFacts {
  t: number;
  j: number;
  /** Block j's positions [start, end) (end not clamped to t + 1). */
  start: number;
  end: number;
  kind: CellKind;
  /** Group score P[t, j] (null when not recorded). */
  score: number | null;
  /** Whether the window [t − w + 1, t] touches block j. */
  inWindow: boolean;
  /** Positions of block j that visible compressed blocks cover (0 … lSel). */
  cmpCovered: number;
  /** Gate means over the group's heads (cmp, sel, win), when recorded. */
  gates: [number, number, number] | null;
}

export function cellFacts(s: SelectionSnapshot, t: number, j: number): CellFacts {
  const c = s.cfg;
  const start = j * c.lSel;
  const end = start + c.lSel;
  const sc = scoreRow(s, t);
  const [w0, w1] = windowBlocks(t, c);
  const f = cmpFrontier(t, c);
  return {
    t,
    j,
    start,
    end,
    kind: rowRecorded(s, t) ? cellKind(t, j, selectionRow(s, t), c) : 'unrecorded',
    score: sc ? sc[j] : null,
    inWindow: j >= w0 && j <= w1,
    cmpCovered: Math.max(0, Math.min(end, f + 1) - start),
    gates: gateMeans(s, t),
  };
}

/** Mean gate per branch over the group's heads at query t, or null without gates. */
export function gateMeans(s: SelectionSnapshot, t: number): [number, number, number] | null {
  if (!s.gates) return null;
  const hpg = s.H / s.G;
  const m: [number, number, number] = [0, 0, 0];
  for (let h = 0; h < hpg; h++) for (let b = 0; b < 3; b++) m[b] += s.gates[(t * hpg + h) * 3 + b] / hpg;
  return m;
}

export const KIND_LABEL: Record<CellKind, string> = {
  future: 'not a candidate (after t)',
  candidate: 'candidate, not selected',
  selected: 'selected',
  forced: 'selected (forced)',
  unrecorded: 'selection not recorded for this query',
};

/**
 * The hover's answer to "why (not) this block?": not yet a candidate, forced, or its score against
 * the lowest score the selection took by content (the n-th selected block; ties go to the lower
 * index, as in the spec's top-n).
 */
export function whyBlock(s: SelectionSnapshot, t: number, j: number): string {
  const c = s.cfg;
  const f = cellFacts(s, t, j);
  const fmt = (x: number) => x.toFixed(4);
  switch (f.kind) {
    case 'unrecorded':
      return 'Not recorded: this snapshot kept the selection of other queries only.';
    case 'future':
      return `Not yet a candidate: block ${j} starts at ${f.start}, after t = ${t}.`;
    case 'forced':
      if (snapshotMechanism(s) === 'moba') return `Always read: block ${j} is the query's own block (MoBA), cut at t, whatever its score.`;
      return j === 0 && c.forceInit
        ? 'Always read: block 0 is forced (forceInit), whatever its score.'
        : `Always read: one of the ${c.forceLocal} local block${c.forceLocal === 1 ? '' : 's'} ending at t (forceLocal), whatever its score.`;
    default:
      break;
  }
  const row = selectionRow(s, t);
  const picked = [...row].filter((b) => b >= 0 && cellKind(t, b, row, c) === 'selected');
  const sc = scoreRow(s, t);
  if (f.kind === 'selected') {
    if (!sc) return `Selected by score (one of the ${picked.length} blocks picked by content).`;
    const rank = picked.filter((b) => sc[b] > sc[j] || (sc[b] === sc[j] && b < j)).length + 1;
    return `Selected by score: P = ${fmt(sc[j])}, rank ${rank} of the ${picked.length} picked by content.`;
  }
  if (picked.length === 0) return `Not selected: all n = ${c.nSel} slots go to forced blocks, so no block is picked by score.`;
  if (!sc) return 'Not selected: its score was below those of the selected blocks (scores not recorded).';
  const nth = picked.reduce((m, b) => (sc[b] < sc[m] || (sc[b] === sc[m] && b > m) ? b : m), picked[0]);
  const gap = sc[nth] - sc[j];
  return gap > 0
    ? `Not selected: P = ${fmt(sc[j])} is below ${fmt(sc[nth])}, the lowest score picked (block ${nth}); it lacks ${fmt(gap)}.`
    : `Not selected: P = ${fmt(sc[j])} ties block ${nth}'s ${fmt(sc[nth])}, and ties go to the lower block index.`;
}
