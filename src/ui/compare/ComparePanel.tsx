// Compare runs: the runs picked in the library overlaid on their charts (training loss, validation
// loss, tokens/s, a task's answer accuracy with chance, gate means; one colour per run, a legend,
// one smoothing control for all; accuracy against keys read per query when task runs differ in
// mechanism or budget) with
// the settings that differ and each run's figures beside them. One picked run ("Open") shows its
// curves alone.
import { forwardRef, useMemo, useState } from 'react';

import { compareRuns } from '../../train/compare';
import { bandLabel, percent, taskChanceBand } from '../charts/chance-band';
import { MetricChart } from '../charts/MetricChart';
import { SmoothingControl } from '../charts/SmoothingControl';
import { useLibrary } from '../library/library-state';
import { accuracyKeysPoints } from './accuracy-keys';
import { AccuracyKeysChart } from './AccuracyKeysChart';
import { compareLines } from './compare-series';
import { CompareTables } from './CompareTables';
import { useComparedRuns } from './use-compared-runs';

const DEFAULT_SMOOTHING = 0.6;
const twoDecimals = (v: number) => v.toFixed(2);
const ACCURACY_RANGE = [0, 1] as const;
let revisions = 0;

export const ComparePanel = forwardRef<HTMLElement>(function ComparePanel(_props, ref) {
  const picked = useLibrary((s) => s.compare.length);
  const setCompare = useLibrary((s) => s.setCompare);
  const runs = useComparedRuns();
  const [smoothing, setSmoothing] = useState(DEFAULT_SMOOTHING);
  // New series whenever the runs or the smoothing change: a new revision for the charts.
  const { lines, revision } = useMemo(() => ({ lines: compareLines(runs, smoothing), revision: ++revisions }), [runs, smoothing]);
  const comparison = useMemo(() => compareRuns(runs), [runs]);
  const accKeys = useMemo(() => accuracyKeysPoints(runs), [runs]);
  // Chance (and the sampling band) when the task runs share them.
  const chance = useMemo(() => {
    const bands = runs.flatMap((r) => {
      const b = taskChanceBand(r.config);
      return b ? [b] : [];
    });
    if (bands.length === 0 || bands.some((b) => b.chance !== bands[0].chance)) return null;
    const b = bands[0];
    return {
      reference: { y: b.chance, label: `chance ${percent(b.chance)}` },
      band: bands.every((x) => x.n === b.n) ? { y0: b.low, y1: b.high, label: bandLabel(b) } : null,
    };
  }, [runs]);
  if (picked === 0) return null;
  return (
    <section
      ref={ref}
      className="panel compare-panel"
      aria-labelledby="compare-heading"
      data-testid="compare-panel"
      data-runs={runs.length}
    >
      <div className="charts-head">
        <h2 id="compare-heading">{runs.length > 1 ? `Comparing ${runs.length} runs` : `Run: ${runs[0]?.name ?? 'loading…'}`}</h2>
        <div className="controls">
          <SmoothingControl value={smoothing} onChange={setSmoothing} testId="compare-smoothing" />
          <button type="button" data-testid="compare-close" onClick={() => setCompare([])}>
            Close
          </button>
        </div>
      </div>
      {runs.length < picked && <p className="muted">Loading run histories…</p>}
      <div className="compare-body">
        <div className="compare-charts">
          <MetricChart testId="compare-loss" title="Training loss (smoothed)" format={twoDecimals} lines={lines.loss} revision={revision} />
          <MetricChart testId="compare-val" title="Validation loss" format={twoDecimals} lines={lines.val} revision={revision} />
          <MetricChart testId="compare-tokens" title="Tokens per second (smoothed)" lines={lines.tokens} revision={revision} />
          {lines.accuracy.length > 0 && (
            <MetricChart
              testId="compare-accuracy"
              title="Answer accuracy (validation)"
              format={percent}
              lines={lines.accuracy}
              revision={revision}
              yRange={ACCURACY_RANGE}
              reference={chance?.reference ?? null}
              band={chance?.band ?? null}
            />
          )}
          {accKeys.length > 0 && <AccuracyKeysChart points={accKeys} />}
          {lines.gates.length > 0 && (
            <MetricChart
              testId="compare-gates"
              title="Gate mean per branch (solid cmp, dashed sel, dotted win)"
              lines={lines.gates}
              revision={revision}
            />
          )}
        </div>
        <CompareTables comparison={comparison} />
      </div>
    </section>
  );
});
