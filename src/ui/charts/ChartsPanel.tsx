// The run's charts: training and validation loss, tokens/s, learning rate, gradient norm and, for
// NSA models, the gate mean of each branch; one smoothing weight (TensorBoard-style, the raw
// values faint behind) and one log-scale switch for all of them.
import { useId, useMemo, useRef, useState } from 'react';

import { useStore } from '../store';
import { type LineSpec, MetricChart } from './MetricChart';
import { LOSS_SHARE } from './pacing';
import { ChartSeries } from './series';
import { SmoothingControl } from './SmoothingControl';

export const COLORS = {
  train: '#3b82f6',
  val: '#f97316',
  rate: '#10b981',
  lr: '#a855f7',
  grad: '#ef4444',
  cmp: '#0ea5e9',
  sel: '#f59e0b',
  win: '#22c55e',
};

const DEFAULT_SMOOTHING = 0.6;
const twoDecimals = (v: number) => v.toFixed(2);

export function ChartsPanel() {
  const metrics = useStore((s) => s.metrics);
  const evals = useStore((s) => s.evals);
  const [smoothing, setSmoothing] = useState(DEFAULT_SMOOTHING);
  const [log, setLog] = useState(false);
  const ids = { log: useId() };
  const series = useRef<ChartSeries | null>(null);
  series.current ??= new ChartSeries(DEFAULT_SMOOTHING);
  const s = series.current;
  // Appends only the new steps (sync is idempotent, so a repeated render does no harm); each
  // chart then redraws at its own pace (see MetricChart).
  const revision = useMemo(() => {
    s.sync(metrics, evals, smoothing);
    return s.revision;
  }, [s, metrics, evals, smoothing]);
  // Line lists change identity only with the smoothing weight: the loss chart redraws at once.
  const lines = useMemo(
    () =>
      ({
        loss: [
          { id: 'train-raw', name: 'train (raw)', series: s.get('lossRaw'), color: COLORS.train, faint: true },
          { id: 'train', name: 'train', series: s.get('lossSmooth'), color: COLORS.train },
          { id: 'val', name: 'validation', series: s.get('val'), color: COLORS.val, dots: true },
        ],
        tokens: [
          { id: 'tokens-raw', name: 'tokens/s (raw)', series: s.get('tokensPerSecond'), color: COLORS.rate, faint: true },
          { id: 'tokens', name: 'tokens/s', series: s.get('tokensSmooth'), color: COLORS.rate },
        ],
        lr: [{ id: 'lr', name: 'lr', series: s.get('lr'), color: COLORS.lr }],
        grad: [
          { id: 'grad-raw', name: 'grad norm (raw)', series: s.get('gradNorm'), color: COLORS.grad, faint: true },
          { id: 'grad', name: 'grad norm', series: s.get('gradSmooth'), color: COLORS.grad },
        ],
        gates: [
          { id: 'gate-cmp', name: 'compressed', series: s.get('gateCmpSmooth'), color: COLORS.cmp },
          { id: 'gate-sel', name: 'selected', series: s.get('gateSelSmooth'), color: COLORS.sel },
          { id: 'gate-win', name: 'window', series: s.get('gateWinSmooth'), color: COLORS.win },
        ],
      }) satisfies Record<string, LineSpec[]>,
    [s],
  );
  // New arrays when the smoothing weight changes: the smoothed charts redraw at once.
  const shownLines = useMemo(
    () => ({ loss: [...lines.loss], tokens: [...lines.tokens], grad: [...lines.grad], gates: [...lines.gates] }),
    [lines, smoothing],
  );
  // Gates: for NSA runs (mounted before the run, like every chart), or whatever run reported them.
  const nsa = useStore((st) => (st.runConfig ?? st.config).model.attention === 'nsa');
  const hasGates = nsa || s.get('gateCmp').length > 0;
  return (
    <section className="panel charts-panel" aria-labelledby="charts-heading" data-testid="charts-panel">
      <div className="charts-head">
        <h2 id="charts-heading">Charts</h2>
        <div className="controls">
          <SmoothingControl value={smoothing} onChange={setSmoothing} testId="smoothing-slider" valueTestId="smoothing-value" />
          <input id={ids.log} data-testid="log-scale" type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} />
          <label htmlFor={ids.log}>Log scale (every chart)</label>
        </div>
      </div>
      <MetricChart
        testId="loss-chart"
        title="Loss (nats/token)"
        log={log}
        height={260}
        format={twoDecimals}
        lines={shownLines.loss}
        revision={revision}
        share={LOSS_SHARE}
      />
      <div className="chart-grid">
        <MetricChart testId="tokens-chart" title="Tokens per second" log={log} lines={shownLines.tokens} revision={revision} />
        <MetricChart testId="lr-chart" title="Learning rate" log={log} lines={lines.lr} revision={revision} />
        <MetricChart
          testId="gradnorm-chart"
          title="Gradient norm (before clipping)"
          log={log}
          lines={shownLines.grad}
          revision={revision}
        />
        {hasGates && (
          <MetricChart
            testId="gates-chart"
            title="Gate mean per branch"
            log={log}
            format={twoDecimals}
            lines={shownLines.gates}
            revision={revision}
          />
        )}
      </div>
    </section>
  );
}
