// The run's charts: training and validation loss (TensorBoard-style smoothing, log scale),
// tokens/s, learning rate, gradient norm and, for NSA models, the gate mean of each branch.
import { useDeferredValue, useId, useMemo, useState } from 'react';
import { useStore } from '../store';
import { MetricChart, type LineSpec } from './MetricChart';
import { lossSeries, rateSeries } from './series';
import { refreshInterval, useThrottled } from './throttle';

export const COLORS = { train: '#3b82f6', val: '#f97316', rate: '#10b981', lr: '#a855f7', grad: '#ef4444', cmp: '#0ea5e9', sel: '#f59e0b', win: '#22c55e' };

const DEFAULT_SMOOTHING = 0.6;
const twoDecimals = (v: number) => v.toFixed(2);

export function ChartsPanel() {
  // Paced by the drawing cost (see throttle.ts), then deferred: renders run at low priority and
  // yield to input and animation frames.
  const live = useStore((s) => s.metrics);
  const interval = refreshInterval(live.length);
  const metrics = useDeferredValue(useThrottled(live, interval));
  const evals = useDeferredValue(useThrottled(useStore((s) => s.evals), interval));
  const [smoothing, setSmoothing] = useState(DEFAULT_SMOOTHING);
  const [log, setLog] = useState(false);
  const ids = { smooth: useId(), log: useId() };
  // Stable line lists: a memoised chart re-renders only when its own data changes.
  const lossLines = useMemo((): LineSpec[] => {
    const l = lossSeries(metrics, evals, smoothing);
    return [
      { id: 'train-raw', name: 'train (raw)', points: l.lossRaw, color: COLORS.train, faint: true },
      { id: 'train', name: 'train', points: l.lossSmooth, color: COLORS.train },
      { id: 'val', name: 'validation', points: l.val, color: COLORS.val, dots: true },
    ];
  }, [metrics, evals, smoothing]);
  const other = useMemo(() => {
    const r = rateSeries(metrics);
    return {
      tokens: [{ id: 'tokens', name: 'tokens/s', points: r.tokensPerSecond, color: COLORS.rate }],
      lr: [{ id: 'lr', name: 'lr', points: r.lr, color: COLORS.lr }],
      grad: [{ id: 'grad', name: 'grad norm', points: r.gradNorm, color: COLORS.grad }],
      gates: [
        { id: 'gate-cmp', name: 'compressed', points: r.gates[0], color: COLORS.cmp },
        { id: 'gate-sel', name: 'selected', points: r.gates[1], color: COLORS.sel },
        { id: 'gate-win', name: 'window', points: r.gates[2], color: COLORS.win },
      ],
    } satisfies Record<string, LineSpec[]>;
  }, [metrics]);
  const hasGates = other.gates[0].points.length > 0;
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
      <MetricChart testId="loss-chart" title="Loss (nats/token)" log={log} height={260} format={twoDecimals} lines={lossLines} />
      <div className="chart-grid">
        <MetricChart testId="tokens-chart" title="Tokens per second" lines={other.tokens} />
        <MetricChart testId="lr-chart" title="Learning rate" lines={other.lr} />
        <MetricChart testId="gradnorm-chart" title="Gradient norm (before clipping)" lines={other.grad} />
        {hasGates && <MetricChart testId="gates-chart" title="Gate mean per branch" format={twoDecimals} lines={other.gates} />}
      </div>
    </section>
  );
}
