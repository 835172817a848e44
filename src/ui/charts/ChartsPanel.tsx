// The run's charts: training and validation loss (TensorBoard-style smoothing, log scale),
// tokens/s, learning rate, gradient norm and, for NSA models, the gate mean of each branch.
import { useId, useMemo, useState } from 'react';
import { useStore } from '../store';
import { MetricChart } from './MetricChart';
import { lossSeries, rateSeries } from './series';

export const COLORS = { train: '#3b82f6', val: '#f97316', rate: '#10b981', lr: '#a855f7', grad: '#ef4444', cmp: '#0ea5e9', sel: '#f59e0b', win: '#22c55e' };

const DEFAULT_SMOOTHING = 0.6;

export function ChartsPanel() {
  const metrics = useStore((s) => s.metrics);
  const evals = useStore((s) => s.evals);
  const [smoothing, setSmoothing] = useState(DEFAULT_SMOOTHING);
  const [log, setLog] = useState(false);
  const ids = { smooth: useId(), log: useId() };
  const loss = useMemo(() => lossSeries(metrics, evals, smoothing), [metrics, evals, smoothing]);
  const rates = useMemo(() => rateSeries(metrics), [metrics]);
  const hasGates = rates.gates[0].length > 0;
  return (
    <section className="panel charts-panel" aria-labelledby="charts-heading" data-testid="charts-panel">
      <div className="charts-head">
        <h2 id="charts-heading">Charts</h2>
        <div className="controls">
          <label htmlFor={ids.smooth}>Smoothing</label>
          <input
            id={ids.smooth}
            data-testid="smoothing-slider"
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            onChange={(e) => setSmoothing(Number(e.target.value))}
          />
          <output htmlFor={ids.smooth} data-testid="smoothing-value">
            {smoothing.toFixed(2)}
          </output>
          <input id={ids.log} data-testid="log-scale" type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} />
          <label htmlFor={ids.log}>Log-scale loss</label>
        </div>
      </div>
      <MetricChart
        testId="loss-chart"
        title="Loss (nats/token)"
        log={log}
        height={260}
        format={(v) => v.toFixed(2)}
        lines={[
          { name: 'train (raw)', points: loss.lossRaw, color: COLORS.train, faint: true },
          { name: 'train', points: loss.lossSmooth, color: COLORS.train },
          { name: 'validation', points: loss.val, color: COLORS.val, dots: true },
        ]}
      />
      <div className="chart-grid">
        <MetricChart testId="tokens-chart" title="Tokens per second" lines={[{ name: 'tokens/s', points: rates.tokensPerSecond, color: COLORS.rate }]} />
        <MetricChart testId="lr-chart" title="Learning rate" lines={[{ name: 'lr', points: rates.lr, color: COLORS.lr }]} />
        <MetricChart testId="gradnorm-chart" title="Gradient norm (before clipping)" lines={[{ name: 'grad norm', points: rates.gradNorm, color: COLORS.grad }]} />
        {hasGates && (
          <MetricChart
            testId="gates-chart"
            title="Gate mean per branch"
            format={(v) => v.toFixed(2)}
            lines={[
              { name: 'compressed', points: rates.gates[0], color: COLORS.cmp },
              { name: 'selected', points: rates.gates[1], color: COLORS.sel },
              { name: 'window', points: rates.gates[2], color: COLORS.win },
            ]}
          />
        )}
      </div>
    </section>
  );
}
