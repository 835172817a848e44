// One recharts line chart over training steps: several series, each decimated to the chart's
// width (min/max buckets, see decimate.ts), no animation, optional log-scaled y axis. During a run
// it redraws at its own pace, one chart per frame, and not while off screen (see pacing.ts).
import { memo, useMemo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ReferenceArea, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';

import { ChartExport } from './ChartExport';
import { type MinMaxBuckets, type Point, pointBudget } from './decimate';
import { NOT_DRAWN, usePacedRevision } from './pacing';
import { axisTicks } from './ticks';
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
  /** The x axis' name ('step' or 'seconds') and the shown range (zoom), null for all. */
  xName?: string;
  xRange?: readonly [number, number] | null;
  /** A labelled horizontal line, e.g. the task's chance accuracy. */
  reference?: { y: number; label: string } | null;
  /** A shaded horizontal band, e.g. the evaluation's sampling error around chance. */
  band?: Band | null;
  /** A fixed y range (linear scale only; e.g. 0–1 for an accuracy), instead of the data's. */
  yRange?: readonly [number, number] | null;
  /** The exports' file name stem, asked when a file is saved (`${stem}_loss.svg`); no export buttons without it. */
  fileBase?: () => string;
}

export interface Band {
  y0: number;
  y1: number;
  label: string;
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
  xName = 'step',
  xRange = null,
  fileBase,
  reference = null,
  band = null,
  yRange = null,
}: Props) {
  const [ref, width, visible] = useBox<HTMLElement>(600);
  const budget = pointBudget(width);
  const shown = usePacedRevision(testId, revision, visible, share);
  // `shown` is the key of the series' contents (they are mutated in place): new arrays only when
  // the chart redraws, the width changes or the lines do (e.g. another smoothing weight).
  const drawn = useMemo(
    () =>
      shown === NOT_DRAWN
        ? []
        : lines.map((l) => ({ ...l, points: inRange(l.series.points(budget), xRange) })).filter((l) => l.points.length > 0),
    [lines, shown, budget, xRange],
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
      data-reference={reference?.y ?? ''}
      data-band={band ? `${band.y0},${band.y1}` : ''}
      aria-label={title}
    >
      <figcaption>
        {title}
        {fileBase && <ChartExport testId={testId} title={title} fileBase={fileBase} xName={xName} drawn={drawn} figure={ref} />}
      </figcaption>
      {shown === NOT_DRAWN ? (
        <Empty height={height} />
      ) : (
        <ChartBody
          drawn={drawn}
          width={width}
          log={log}
          height={height}
          format={format}
          xName={xName}
          xRange={xRange}
          reference={reference}
          band={band}
          yRange={yRange}
        />
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
  xName: string;
  xRange: readonly [number, number] | null;
  reference: { y: number; label: string } | null;
  band: Band | null;
  yRange: readonly [number, number] | null;
}

/** The points inside the zoom range (all without one). */
function inRange(points: Point[], range: readonly [number, number] | null): Point[] {
  return range ? points.filter((p) => p.x >= range[0] && p.x <= range[1]) : points;
}

/** The drawing: re-rendered only when what is drawn changes (not on every run update). */
const ChartBody = memo(function ChartBody({ drawn, width, log, height, format, xName, xRange, reference, band, yRange }: BodyProps) {
  const refY = reference?.y ?? null;
  const fixedY = log ? null : yRange;
  const axes = useMemo(
    () => chartAxes(drawn, width, height, log, format, xRange, xName, refY, fixedY),
    [drawn, width, height, log, format, xRange, xName, refY, fixedY],
  );
  // The chart stays mounted while empty (mounting is recharts' costliest render): a new run or a
  // reset only changes its lines.
  return (
    <div style={BODY_STYLE}>
      <LineChart width={width} height={height} margin={{ top: 8, right: 24, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" />
        {/* Ticks from ./ticks (round, distinct, spaced for their labels); interval 0 draws them all. */}
        <XAxis dataKey="x" type="number" domain={axes.xDomain} ticks={axes.xTicks} allowDecimals={false} interval={0} />
        <YAxis
          dataKey="y"
          type="number"
          scale={log ? 'log' : 'auto'}
          domain={axes.yDomain}
          ticks={axes.yTicks}
          allowDataOverflow
          width={Y_AXIS_WIDTH}
          interval={0}
          tickFormatter={format}
        />
        <Tooltip formatter={(v) => (typeof v === 'number' ? format(v) : String(v))} labelFormatter={(s) => `${xName} ${String(s)}`} />
        {band && drawn.length > 0 && (
          <ReferenceArea
            y1={band.y0}
            y2={band.y1}
            ifOverflow="hidden"
            fill="currentColor"
            fillOpacity={0.12}
            stroke="none"
            label={{ value: band.label, position: 'insideBottomLeft', fontSize: 11 }}
          />
        )}
        {reference && drawn.length > 0 && (
          <ReferenceLine
            y={reference.y}
            stroke="currentColor"
            strokeDasharray="4 4"
            label={{ value: reference.label, position: 'insideTopRight', fontSize: 11 }}
          />
        )}
        {/* No fixed height: recharts measures the legend (several rows when it wraps) and moves the plot below it. */}
        {drawn.length > 1 && <Legend verticalAlign="top" iconSize={10} wrapperStyle={LEGEND_STYLE} />}
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

const LEGEND_STYLE = { paddingBottom: 6, lineHeight: '16px' } as const;
const Y_AXIS_WIDTH = 64;
const MARGIN_RIGHT = 24;

interface Axes {
  xDomain: [number, number] | ['dataMin', 'dataMax'];
  xTicks: number[] | undefined;
  yDomain: [number, number] | ['auto', 'auto'];
  yTicks: number[] | undefined;
}

/** Domains and ticks of the drawn points (log: positive values only). */
function chartAxes(
  drawn: readonly DrawnLine[],
  width: number,
  height: number,
  log: boolean,
  format: (v: number) => string,
  xRange: readonly [number, number] | null,
  xName: string,
  /** A reference line's y, kept inside the y range. */
  refY: number | null,
  /** A fixed y range (linear charts), whatever the points. */
  fixedY: readonly [number, number] | null = null,
): Axes {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const l of drawn)
    for (const p of l.points) {
      if (Number.isFinite(p.x)) [x0, x1] = [Math.min(x0, p.x), Math.max(x1, p.x)];
      if (Number.isFinite(p.y) && (!log || p.y > 0)) [y0, y1] = [Math.min(y0, p.y), Math.max(y1, p.y)];
    }
  if (xRange) [x0, x1] = [xRange[0], xRange[1]];
  if (refY !== null && Number.isFinite(refY) && (!log || refY > 0) && y0 <= y1) [y0, y1] = [Math.min(y0, refY), Math.max(y1, refY)];
  if (!(x0 <= x1 && y0 <= y1)) return { xDomain: ['dataMin', 'dataMax'], xTicks: undefined, yDomain: ['auto', 'auto'], yTicks: undefined };
  if (y1 - y0 <= Math.abs(y1) * 1e-9)
    [y0, y1] = log ? [y0 / 2, y1 * 2] : [y0 - Math.max(1e-6, Math.abs(y0) * 0.05), y1 + Math.max(1e-6, Math.abs(y1) * 0.05)];
  if (fixedY) [y0, y1] = [fixedY[0], fixedY[1]];
  const plotW = Math.max(40, width - Y_AXIS_WIDTH - MARGIN_RIGHT);
  const plotH = Math.max(40, height - 40);
  const xFormat = (v: number) => String(v);
  const integer = xName === 'step';
  return {
    xDomain: [x0, x1],
    xTicks: axisTicks(x0, x1, plotW, xFormat, { integer, horizontal: true }),
    yDomain: [y0, y1],
    yTicks: axisTicks(y0, y1, plotH, format, { log }),
  };
}

function Empty({ height, overlay = false }: { height: number; overlay?: boolean }) {
  return (
    <p className="muted chart-empty" style={overlay ? OVERLAY_STYLE : { height }}>
      No data yet.
    </p>
  );
}
