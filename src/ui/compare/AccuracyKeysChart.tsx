// Accuracy against keys read per query: one dot per task run (its colour), its last evaluated
// answer accuracy over the mean keys a query of its config reads — what the sparsity buys or costs.
import { CartesianGrid, LabelList, ReferenceLine, Scatter, ScatterChart, Tooltip, XAxis, YAxis } from 'recharts';

import { useBox } from '../charts/use-box';
import type { AccuracyKeysPoint } from './accuracy-keys';
import { runColor } from './compare-series';

const percent = (v: number) => `${(100 * v).toFixed(0)}%`;
const HEIGHT = 220;

export function AccuracyKeysChart({ points }: { points: readonly AccuracyKeysPoint[] }) {
  const [ref, width] = useBox<HTMLElement>(400);
  const chances = new Set(points.map((p) => p.chance));
  const chance = chances.size === 1 ? points[0].chance : null;
  const maxKeys = Math.max(...points.map((p) => p.keys));
  return (
    <figure
      className="chart"
      ref={ref}
      data-testid="compare-accuracy-keys"
      data-points={points.length}
      aria-label="Accuracy against keys read per query"
    >
      <figcaption>Answer accuracy (last evaluation) against keys read per query (mean over t)</figcaption>
      <ScatterChart width={width} height={HEIGHT} margin={{ top: 16, right: 24, bottom: 8, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis type="number" dataKey="keys" name="keys read per query" domain={[0, Math.ceil(maxKeys * 1.1)]} allowDecimals={false} />
        <YAxis
          type="number"
          dataKey="accuracy"
          name="accuracy"
          domain={[0, 1]}
          ticks={[0, 0.25, 0.5, 0.75, 1]}
          tickFormatter={percent}
          width={48}
        />
        <Tooltip formatter={(v) => (typeof v === 'number' ? v.toFixed(3) : String(v))} />
        {chance !== null && (
          <ReferenceLine
            y={chance}
            stroke="currentColor"
            strokeDasharray="4 4"
            label={{ value: `chance ${percent(chance)}`, position: 'insideTopRight', fontSize: 11 }}
          />
        )}
        {points.map((p) => (
          <Scatter key={p.run} name={p.name} data={[p]} fill={runColor(p.run)} isAnimationActive={false}>
            <LabelList dataKey="name" position="top" fontSize={11} />
          </Scatter>
        ))}
      </ScatterChart>
    </figure>
  );
}
