// One recharts line chart over training steps: several series, each decimated to the chart's
// width (min/max buckets, see decimate.ts), no animation, optional log-scaled y axis. During a run
// it redraws at its own pace, one chart per frame, and not while off screen (see pacing.ts).
import { memo, useMemo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';

import { type MinMaxBuckets, type Point, pointBudget } from './decimate';
import { NOT_DRAWN, usePacedRevision } from './pacing';
import { useBox } from './use-box';

export interface LineSpec {
  name: string;
  /** Class of the line's layer (`series-<id>`), for styling and tests. */
  id: string;
  series: MinMaxBuckets;
  color: string;
  /** Thin and faint (raw values behind a smoothed line). */
  faint?: boolean;
  /** Draw dots (sparse series such as validation loss) while the line has few points. */
  dots?: boolean;
  /** SVG stroke-dasharray (lines of one colour told apart), e.g. '6 3'. */
  dash?: string;
}

interface Props {
  testId: string;
  title: string;
  /** The series, mutated in place as the run grows; `revision` says when they changed. */
  lines: readonly LineSpec[];
  revision: number;
  log?: boolean;
  height?: number;
  format?: (v: number) => string;
  /** Share of the main thread its redraws may take during a run (see pacing.ts). */
  share?: number;
}

const FIGURE_STYLE = { minWidth: 0 } as const;
const BODY_STYLE = { position: 'relative' } as const;
const OVERLAY_STYLE = { position: 'absolute', inset: 0, background: 'var(--panel)' } as const;

/** Above this many points a line's dots would hide it (and each dot is an SVG element per redraw). */
const MAX_DOTS = 40;

const defaultFormat = (v: number) =>
  Math.abs(v) >= 1000 ? v.toExponential(1) : Math.abs(v) < 0.01 && v !== 0 ? v.toExponential(1) : v.toPrecision(3);

export const MetricChart = memo(function MetricChart({
  testId,
  title,
  lines,
  revision,
  log = false,
  height = 200,
  format = defaultFormat,
  share,
}: Props) {
  const [ref, width, visible] = useBox<HTMLElement>(600);
  const budget = pointBudget(width);
  const shown = usePacedRevision(testId, revision, visible, share);
  // `shown` is the key of the series' contents (they are mutated in place): new arrays only when
  // the chart redraws, the width changes or the lines do (e.g. another smoothing weight).
  const drawn = useMemo(
    () => (shown === NOT_DRAWN ? [] : lines.map((l) => ({ ...l, points: l.series.points(budget) })).filter((l) => l.points.length > 0)),
    [lines, shown, budget],
  );
  const count = drawn.reduce((a, l) => a + l.points.length, 0);
  return (
    // min-width 0: in a grid cell the figure may shrink below the drawn SVG, so it is re-measured.
    <figure
      className="chart"
      style={FIGURE_STYLE}
      ref={ref}
      data-testid={testId}
      data-points={count}
      data-budget={budget}
      data-revision={shown}
      data-current={shown === revision}
      aria-label={title}
    >
      <figcaption>{title}</figcaption>
      {shown === NOT_DRAWN ? (
        <Empty height={height} />
      ) : (
        <ChartBody drawn={drawn} width={width} log={log} height={height} format={format} />
      )}
    </figure>
  );
});

interface DrawnLine extends LineSpec {
  points: Point[];
}

interface BodyProps {
  drawn: DrawnLine[];
  /** The figure's width (measured once for the point budget; no ResponsiveContainer to measure again). */
  width: number;
  log: boolean;
  height: number;
  format: (v: number) => string;
}

/** The drawing: re-rendered only when what is drawn changes (not on every run update). */
const ChartBody = memo(function ChartBody({ drawn, width, log, height, format }: BodyProps) {
  // The chart stays mounted while empty (mounting is recharts' costliest render): a new run or a
  // reset only changes its lines.
  return (
    <div style={BODY_STYLE}>
      <LineChart width={width} height={height} margin={{ top: 8, right: 24, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" />
        {/* interval 0: every computed tick (≤ 6, never overlapping), no label text measured per redraw. */}
        <XAxis dataKey="x" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} tickCount={6} interval={0} />
        <YAxis
          dataKey="y"
          type="number"
          scale={log ? 'log' : 'auto'}
          domain={['auto', 'auto']}
          allowDataOverflow={log}
          width={64}
          interval={0}
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
            strokeDasharray={l.dash}
            dot={l.dots && l.points.length <= MAX_DOTS ? { r: 3, fill: l.color } : false}
            activeDot={l.faint ? false : { r: 4 }}
            isAnimationActive={false}
            connectNulls
          />
        ))}
      </LineChart>
      {drawn.length === 0 && <Empty height={height} overlay />}
    </div>
  );
});

function Empty({ height, overlay = false }: { height: number; overlay?: boolean }) {
  return (
    <p className="muted chart-empty" style={overlay ? OVERLAY_STYLE : { height }}>
      No data yet.
    </p>
  );
}
