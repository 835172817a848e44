// Why query t read each of its blocks (NSA, MoBA) or tokens (DSA): forced or picked by score, its
// rank and score, and the ties the lower index won (why.ts).
import type { SelectionSnapshot } from '../../definitions/selection-snapshot';
import { selectionWhy } from './why';

/** Rows listed before the rest are summed up (DSA reads up to k tokens). */
export const WHY_ROWS = 16;

export function WhyList({ snapshot, t }: { snapshot: SelectionSnapshot; t: number }) {
  const why = selectionWhy(snapshot, t);
  const unit = why.mechanism === 'dsa' ? 'token' : 'block';
  const shown = why.items.slice(0, WHY_ROWS);
  return (
    <div className="stepper-why" data-testid="stepper-why-list" data-mechanism={why.mechanism}>
      <p className="muted">
        Why these {unit}s: {why.slots} of {why.scored} scored candidate{why.scored === 1 ? '' : 's'} picked by score
        {why.items.some((i) => i.reason === 'forced') ? ', the rest forced' : ''}
        {why.bestLeftOut ? ` (best left out: ${unit} ${why.bestLeftOut.index})` : ''}.
      </p>
      <ul className="stepper-why-list">
        {shown.map((i) => (
          <li
            key={i.index}
            data-testid="stepper-why-row"
            data-index={i.index}
            data-reason={i.reason}
            data-rank={i.rank ?? ''}
            data-tie={i.tie}
          >
            <code>
              {unit} {i.index} [{i.start}, {i.end})
            </code>{' '}
            {i.text}
          </li>
        ))}
      </ul>
      {why.items.length > shown.length && (
        <p className="muted">
          … and {why.items.length - shown.length} more {unit}s (ranks as above).
        </p>
      )}
    </div>
  );
}
