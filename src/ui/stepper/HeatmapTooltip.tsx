// Hover card of one heatmap cell.
import { type SelectionSnapshot, snapshotMechanism } from '../../definitions/selection-snapshot';
import { cellFacts, KIND_LABEL, whyBlock } from './cell-facts';

interface Props {
  snapshot: SelectionSnapshot;
  t: number;
  j: number;
  /** Pointer position inside the heatmap, CSS px. */
  x: number;
  y: number;
  width: number;
}

export function HeatmapTooltip({ snapshot, t, j, x, y, width }: Props) {
  const f = cellFacts(snapshot, t, j);
  const mechanism = snapshotMechanism(snapshot);
  // The window and compressed keys are NSA's branches; MoBA and DSA have neither.
  const nsa = mechanism === 'nsa';
  const left = x + 240 > width ? Math.max(0, x - 236) : x + 14;
  return (
    <div className="stepper-tooltip" data-testid="stepper-tooltip" role="tooltip" style={{ left, top: y + 14 }}>
      <div>
        <strong>t = {t}</strong>, {mechanism === 'dsa' ? 'token' : 'block'} <strong>j = {j}</strong>{' '}
        <span className="muted">
          [{f.start}, {f.end})
        </span>
      </div>
      <div className={`kind kind-${f.kind}`}>{KIND_LABEL[f.kind]}</div>
      <div className="why" data-testid="stepper-why">
        {whyBlock(snapshot, t, j)}
      </div>
      <div>
        {nsa ? 'P' : mechanism === 'dsa' ? 'I' : 'P'} = {f.score === null ? 'not recorded' : f.score.toFixed(4)}
      </div>
      {nsa && <div>{f.inWindow ? 'touched by the window' : 'outside the window'}</div>}
      {nsa && (
        <div>
          compressed: {f.cmpCovered} of {snapshot.cfg.lSel} positions visible
        </div>
      )}
    </div>
  );
}
