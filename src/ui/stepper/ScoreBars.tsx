// Group score P over the key blocks for the current query, coloured by what happened to each
// block (selected, forced, candidate left out, not a candidate).
import { Bar, BarChart, CartesianGrid, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

import {
  rowRecorded,
  scoreRow,
  selectionRow,
  type SelectionSnapshot,
  snapshotBlocks,
  snapshotMechanism,
} from '../../definitions/selection-snapshot';
import { KIND_LABEL } from './cell-facts';
import { type CellKind, cellKind } from './geometry';
import { css, scoreColour, type StepperPalette } from './palette';

interface Props {
  snapshot: SelectionSnapshot;
  t: number;
  palette: StepperPalette;
}

interface Datum {
  j: number;
  P: number;
  kind: CellKind;
}

/** What the bars are: NSA's P by overlap, MoBA's P over block means, DSA's index scores per token. */
export function barsCaption(s: SelectionSnapshot): string {
  const mech = snapshotMechanism(s);
  if (mech === 'dsa') return 'Index score I[t, s] of each token s (one indexer per layer: every group reads the same tokens)';
  const heads = `sum over the group's ${s.H / s.G} heads`;
  if (mech === 'moba') return `Group score P[t, j]: softmax of q·mean(K) over the complete blocks, ${heads}`;
  return `Group score P[t, j] (${heads})`;
}

export function ScoreBars({ snapshot: s, t, palette: p }: Props) {
  const scores = rowRecorded(s, t) ? scoreRow(s, t) : null;
  if (!scores) {
    return (
      <p className="muted" data-testid="stepper-bars-missing">
        Group scores P were not recorded for this query (decoding records the selected blocks only).
      </p>
    );
  }
  const row = selectionRow(s, t);
  const data: Datum[] = Array.from({ length: snapshotBlocks(s) }, (_, j) => ({ j, P: scores[j], kind: cellKind(t, j, row, s.cfg) }));
  const fill = (k: CellKind) =>
    css(k === 'forced' ? p.forced : k === 'selected' ? p.selected : k === 'candidate' ? scoreColour(p, 0.6) : p.grid);
  return (
    <figure
      className="stepper-bars"
      data-testid="stepper-bars"
      aria-label={`${snapshotMechanism(s) === 'dsa' ? 'Index score over' : 'Group score P over'} ${data.length} ${snapshotMechanism(s) === 'dsa' ? 'tokens' : 'blocks'} at t = ${t}`}
    >
      <ResponsiveContainer width="100%" height={150}>
        <BarChart data={data} margin={{ top: 6, right: 8, bottom: 0, left: 0 }} barCategoryGap="12%">
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke={css(p.grid)} />
          <XAxis dataKey="j" tick={{ fill: css(p.text), fontSize: 11 }} stroke={css(p.grid)} interval="preserveStartEnd" />
          <YAxis width={40} tick={{ fill: css(p.text), fontSize: 11 }} stroke={css(p.grid)} tickFormatter={(v: number) => v.toFixed(2)} />
          <Tooltip
            cursor={{ fill: css(p.grid, 0.5) }}
            contentStyle={{ background: 'var(--panel)', border: '1px solid var(--border)', color: 'var(--fg)' }}
            labelFormatter={(j) => `block j = ${String(j)}`}
            formatter={(v, _n, item) => [
              typeof v === 'number' ? v.toFixed(4) : String(v),
              `P (${KIND_LABEL[(item.payload as Datum).kind]})`,
            ]}
          />
          <Bar dataKey="P" isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.j} fill={fill(d.kind)} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
      <figcaption className="muted">{barsCaption(s)}</figcaption>
    </figure>
  );
}
