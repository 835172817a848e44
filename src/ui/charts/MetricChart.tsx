// One recharts line chart over training steps: several series, each with its own points,
// decimated to the chart's width (min/max per pixel column, ≤ 1500), no animation, optional
// log-scaled y axis.
import { memo, useMemo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { decimateMinMax, pointBudget, type Point } from './decimate';
import { useWidth } from './use-width';

export interface LineSpec {
  name: string;
  /** Class of the line's layer (`series-<id>`), for styling and tests. */
  id: string;
  points: Point[];
  color: string;
  /** Thin and faint (raw values behind a smoothed line). */
  faint?: boolean;
  /** Draw dots (sparse series such as validation loss). */
  dots?: boolean;
}

interface Props {
  testId: string;
  title: string;
  lines: LineSpec[];
  log?: boolean;
  height?: number;
  format?: (v: number) => string;
}

const defaultFormat = (v: number) => (Math.abs(v) >= 1000 ? v.toExponential(1) : Math.abs(v) < 0.01 && v !== 0 ? v.toExponential(1) : v.toPrecision(3));

/** Re-renders only when its lines (or options) change. */
export const MetricChart = memo(function MetricChart({ testId, title, lines, log = false, height = 200, format = defaultFormat }: Props) {
  const [ref, width] = useWidth<HTMLElement>(600);
  const budget = pointBudget(width);
  const drawn = useMemo(() => lines.filter((l) => l.points.length > 0).map((l) => ({ ...l, points: decimateMinMax(l.points, budget) })), [lines, budget]);
  const count = drawn.reduce((a, l) => a + l.points.length, 0);
  return (
    <figure className="chart" ref={ref} data-testid={testId} data-points={count} aria-label={title}>
      <figcaption>{title}</figcaption>
      {drawn.length === 0 ? (
        <p className="muted chart-empty" style={{ height }}>
          No data yet.
        </p>
      ) : (
        <ResponsiveContainer width="100%" height={height}>
          <LineChart margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="x" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} tickCount={6} />
            <YAxis
              dataKey="y"
              type="number"
              scale={log ? 'log' : 'auto'}
              domain={['auto', 'auto']}
              allowDataOverflow={log}
              width={56}
              tickFormatter={format}
            />
            <Tooltip formatter={(v) => (typeof v === 'number' ? format(v) : String(v))} labelFormatter={(s) => `step ${String(s)}`} />
            {drawn.length > 1 && <Legend verticalAlign="top" height={22} iconSize={10} />}
            {drawn.map((l) => (
              <Line
                key={l.id}
                className={`series-${l.id}`}
                data={l.points}
                dataKey="y"
                name={l.name}
                stroke={l.color}
                strokeOpacity={l.faint ? 0.3 : 1}
                strokeWidth={l.faint ? 1 : 2}
                dot={l.dots ? { r: 3, fill: l.color } : false}
                activeDot={l.faint ? false : { r: 4 }}
                isAnimationActive={false}
                connectNulls
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
});
