// One benchmark chart: NSA and dense against the context length (log axis), log y, the
// crossover marked. A handful of points, so recharts draws them directly (no decimation).
import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

import { type BenchPoint, crossover, OTHER_SERIES, type OtherSeries } from './bench-lines';

const NSA_COLOR = '#2f6fde';
const DENSE_COLOR = '#d9822b';
/** The other mechanisms (dashed: matched to NSA's budget). */
const OTHER_STYLE: Record<OtherSeries, { name: string; color: string }> = {
  window: { name: 'window', color: '#6b7280' },
  moba: { name: 'MoBA', color: '#2e9e5b' },
  dsa: { name: 'DSA', color: '#9b4dca' },
};

export const formatT = (T: number): string => (T >= 1024 && T % 1024 === 0 ? `${T / 1024}k` : String(T));

function formatValue(v: number): string {
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(2);
}

interface Props {
  testId: string;
  title: string;
  unit: string;
  points: readonly BenchPoint[];
  /** Mark where NSA drops below dense (times); not for counts that NSA keeps lower throughout. */
  markCrossover?: boolean;
}

export function BenchChart({ testId, title, unit, points, markCrossover = true }: Props) {
  const at = markCrossover ? crossover(points) : null;
  const others = OTHER_SERIES.filter((m) => points.some((p) => p[m] !== undefined));
  return (
    <figure
      className="bench-chart"
      data-testid={testId}
      data-points={points.length}
      data-crossover={at ?? ''}
      data-mechanisms={['nsa', 'dense', ...others].join(' ')}
    >
      <figcaption>
        {title}
        {markCrossover && points.length > 0 && (
          <span className="muted" data-testid={`${testId}-crossover`}>
            {at === null ? ' · NSA is not below dense at the largest context measured' : ` · NSA below dense from T = ${formatT(at)}`}
          </span>
        )}
      </figcaption>
      {points.length === 0 ? (
        <p className="muted">Not measured yet.</p>
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          <LineChart data={points as BenchPoint[]} margin={{ top: 8, right: 16, bottom: 4, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" opacity={0.4} />
            <XAxis
              dataKey="T"
              type="number"
              scale="log"
              domain={['dataMin', 'dataMax']}
              ticks={points.map((p) => p.T)}
              tickFormatter={formatT}
            />
            <YAxis scale="log" domain={['auto', 'auto']} tickFormatter={formatValue} width={56} allowDataOverflow />
            <Tooltip formatter={(v) => `${formatValue(Number(v))} ${unit}`} labelFormatter={(T) => `T = ${formatT(Number(T))}`} />
            <Legend />
            <Line dataKey="nsa" name="NSA" stroke={NSA_COLOR} dot isAnimationActive={false} />
            <Line dataKey="dense" name="dense" stroke={DENSE_COLOR} dot isAnimationActive={false} />
            {others.map((m) => (
              <Line
                key={m}
                dataKey={m}
                name={OTHER_STYLE[m].name}
                stroke={OTHER_STYLE[m].color}
                strokeDasharray="5 3"
                dot
                connectNulls
                isAnimationActive={false}
              />
            ))}
            {at !== null && (
              <ReferenceLine x={at} stroke="currentColor" strokeDasharray="4 4" label={{ value: 'crossover', position: 'top' }} />
            )}
          </LineChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
}
