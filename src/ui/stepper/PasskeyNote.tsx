// For a scored input of a passkey sequence: which digit of the key its target is, where the
// needle holds that digit, and whether input t's selection reads the block holding it — the test
// NSA's selection has to pass.
import { selectionRow, type SelectionSnapshot } from '../../definitions/selection-snapshot';
import type { PasskeyLabels } from './task-roles';

export function PasskeyNote({ snapshot, t, labels }: { snapshot: SelectionSnapshot; t: number; labels: PasskeyLabels }) {
  const digit = labels.digit.get(t);
  const source = labels.sources.get(t);
  if (digit === undefined || source === undefined) return null;
  const block = Math.floor(source / snapshot.cfg.lSel);
  const inside = [...selectionRow(snapshot, t)].includes(block);
  const inWindow = t - source < snapshot.cfg.w;
  return (
    <p className="stepper-recall" data-testid="stepper-passkey" data-inside={inside}>
      Predicts digit {digit + 1} of the passkey; the needle (marker at {labels.needle}) holds it at {source}, block {block}:{' '}
      {inside ? <strong className="recall-hit">inside the selection ✓</strong> : <strong className="recall-miss">not selected ✗</strong>}
      {inWindow ? ' (also in the window)' : ''}
    </p>
  );
}
