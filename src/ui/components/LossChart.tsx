// Training loss per step.
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useStore } from '../store';

export function LossChart() {
  const metrics = useStore((s) => s.metrics);
  return (
    <figure className="chart" data-testid="loss-chart" aria-label="Training loss per step">
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={metrics} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="step" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} />
          <YAxis domain={['auto', 'auto']} width={48} tickFormatter={(v: number) => v.toFixed(2)} />
          <Tooltip formatter={(v) => (typeof v === 'number' ? v.toFixed(4) : String(v))} labelFormatter={(s) => `step ${String(s)}`} />
          <Line dataKey="loss" name="loss" dot={false} isAnimationActive={false} strokeWidth={2} />
        </LineChart>
      </ResponsiveContainer>
      <figcaption className="muted">Training loss (nats/token) per step</figcaption>
    </figure>
  );
}
