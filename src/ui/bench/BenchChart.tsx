// One benchmark chart: NSA and dense against the context length (log axis), log y, the
// crossover marked. A handful of points, so recharts draws them directly (no decimation).
import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

import { type BenchPoint, crossover } from './bench-lines';

const NSA_COLOR = '#2f6fde';
const DENSE_COLOR = '#d9822b';

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
  return (
    <figure className="bench-chart" data-testid={testId} data-points={points.length} data-crossover={at ?? ''}>
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
            {at !== null && (
              <ReferenceLine x={at} stroke="currentColor" strokeDasharray="4 4" label={{ value: 'crossover', position: 'top' }} />
            )}
          </LineChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
}
