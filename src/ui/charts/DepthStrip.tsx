// A passkey run's latest evaluation by needle depth: one cell per range of needle positions (the
// validation keys whose needle sits there, src/train/eval/passkey-depth.ts) with the share of them
// right whole and a bar of that height — the needle-in-a-haystack row that the accuracy chart's one
// line averages away: a model that finds near needles but not far ones shows it here.
import { useMemo } from 'react';

import { useStore } from '../store';
import { percent } from './chance-band';
import { latestDepth } from './latest-depth';

export function DepthStrip() {
  const evals = useStore((s) => s.evals);
  const latest = useMemo(() => latestDepth(evals), [evals]);
  if (!latest) return null;
  return (
    <figure className="depth-strip" data-testid="depth-strip" data-step={latest.step}>
      <figcaption>Whole keys by needle position (validation, step {latest.step})</figcaption>
      <ol>
        {latest.ranges.map((d) => {
          const share = d.sequences ? d.keysRight / d.sequences : null;
          return (
            <li
              key={d.from}
              data-testid="depth-cell"
              title={`needle at positions ${d.from}–${d.to}: ${d.keysRight} of ${d.sequences} keys right`}
            >
              <span className="depth-bar" style={{ height: `${100 * (share ?? 0)}%` }} />
              <span className="depth-value">{share === null ? 'no key' : percent(share)}</span>
              <span className="depth-range">
                {d.from}–{d.to}
              </span>
              <span className="depth-n">{d.sequences} keys</span>
            </li>
          );
        })}
      </ol>
    </figure>
  );
}
