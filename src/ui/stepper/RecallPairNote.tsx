// For a recall query: which stored pair it asks for, and whether query t's selection reads the
// block holding the pair's value (the answer) — the test NSA's selection has to pass.
import { selectionRow, type SelectionSnapshot } from '../../definitions/selection-snapshot';
import type { RecallLabels } from './task-roles';

export function RecallPairNote({ snapshot, t, labels }: { snapshot: SelectionSnapshot; t: number; labels: RecallLabels }) {
  const pair = labels.pairs.get(t);
  if (labels.roles[t] !== 'query' || !pair) return null;
  const block = Math.floor(pair.value / snapshot.cfg.lSel);
  const inside = [...selectionRow(snapshot, t)].includes(block);
  const inWindow = t - pair.value < snapshot.cfg.w;
  return (
    <p className="stepper-recall" data-testid="stepper-recall" data-inside={inside}>
      Asks for the key stored at {pair.key}; its value (the answer) is at {pair.value}, block {block}:{' '}
      {inside ? <strong className="recall-hit">inside the selection ✓</strong> : <strong className="recall-miss">not selected ✗</strong>}
      {inWindow ? ' (also in the window)' : ''}
    </p>
  );
}
