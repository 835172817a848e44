// What the tooltip says about one heatmap cell (query t, block j). Pure, tested in Node.
import { rowRecorded, scoreRow, selectionRow, type SelectionSnapshot } from '../../spec/selection-snapshot';
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
