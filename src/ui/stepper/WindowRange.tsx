// The stepper of a sliding-window run: nothing is selected, so each query's range is drawn from the
// config alone — query t reads [max(0, t − w + 1), t] (docs/nsa-spec.md 15.1).
import { useId, useState } from 'react';

import { windowAsNsa, type WindowConfig } from '../../definitions/mechanisms';
import { clampT, windowSpan } from './geometry';

export function WindowRange({ window: win, T }: { window: WindowConfig; T: number }) {
  const id = useId();
  const [tRaw, setT] = useState<number | null>(null);
  const t = clampT(tRaw ?? T - 1, T);
  const { lo, hi } = windowSpan(t, windowAsNsa(win));
  return (
    <div data-testid="stepper-window">
      <p className="muted">
        This run uses <strong>the sliding window alone</strong>: every query reads its last w = {win.w} keys and nothing is selected, so the
        range below follows from t and w.
      </p>
      <label htmlFor={id}>Query t</label>{' '}
      <input id={id} type="range" min={0} max={Math.max(0, T - 1)} value={t} onChange={(e) => setT(Number(e.target.value))} />{' '}
      <output htmlFor={id} data-testid="stepper-window-range" data-lo={lo} data-hi={hi + 1}>
        t = {t} reads [{lo}, {hi + 1}): {hi - lo + 1} keys (dense: {t + 1})
      </output>
    </div>
  );
}
