// The sweep's results table: one row per setting (its state, best held-out answer accuracy, best
// validation loss, steps, training time), sortable by each column (click its header), and Open to
// see a setting's run in the comparison view.
import { useState } from 'react';

import { percent } from '../charts/chance-band';
import { formatLoss } from '../format';
import { settingLabel, type Sweep } from './sweep-plan';
import { defaultDirection, type SettingResult, type SortKey, type SortOrder, sortResults } from './sweep-results';

const COLUMNS: Array<{ key: SortKey; label: string; num: boolean; title: string }> = [
  {
    key: 'setting',
    label: 'Setting',
    num: false,
    title: 'Mechanism, and the seed and learning rate where the grid has several (grid order)',
  },
  { key: 'bestAccuracy', label: 'Best accuracy', num: true, title: 'Best held-out answer accuracy over its evaluations' },
  { key: 'bestValLoss', label: 'Best val loss', num: true, title: 'Lowest validation loss over its evaluations' },
  { key: 'steps', label: 'Steps', num: true, title: 'Steps trained (fewer than planned when the target was reached)' },
  { key: 'seconds', label: 'Time', num: true, title: "Training time: the sum of its steps' wall-clock times" },
];

const STATE_TEXT = { pending: 'pending', started: 'stopped', finished: 'finished' } as const;

function seconds(s: number): string {
  return s < 120 ? `${s.toFixed(1)} s` : `${(s / 60).toFixed(1)} min`;
}

interface Props {
  sweep: Sweep;
  rows: SettingResult[];
  /** The index of the setting training now, or -1. */
  training: number;
  onOpen(libraryId: string): void;
}

export function SweepTable({ sweep, rows, training, onOpen }: Props) {
  const [order, setOrder] = useState<SortOrder>({ key: 'setting', dir: 'asc' });
  const sorted = sortResults(rows, order);
  const sortBy = (key: SortKey) =>
    setOrder((o) => (o.key === key ? { key, dir: o.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: defaultDirection(key) }));
  const planned = (i: number) => sweep.settings[i].config.train.steps;
  return (
    <div className="table-scroll">
      <table className="library-table sweep-table" data-testid="sweep-table" data-sort={`${order.key} ${order.dir}`}>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                scope="col"
                className={c.num ? 'num' : undefined}
                aria-sort={order.key === c.key ? (order.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
              >
                <button
                  type="button"
                  className="link sort-button"
                  data-testid={`sweep-sort-${c.key}`}
                  title={c.title}
                  onClick={() => sortBy(c.key)}
                >
                  {c.label}
                  {order.key === c.key ? (order.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                </button>
              </th>
            ))}
            <th scope="col">Run</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((r) => {
            const state = r.index === training ? 'training' : STATE_TEXT[r.setting.state];
            return (
              <tr key={r.index} data-testid="sweep-row" data-index={r.index} data-state={state} data-mechanism={r.setting.mechanism}>
                <td>
                  {settingLabel(sweep, r.setting)} <span className={`badge sweep-state-${state}`}>{state}</span>
                </td>
                <td className="num" data-testid="sweep-accuracy" data-value={r.bestAccuracy ?? ''}>
                  {r.bestAccuracy === null ? '—' : percent(r.bestAccuracy)}
                  {r.reachedAt !== null && (
                    <span className="muted" title={`The target ${percent(sweep.grid.target)} was reached at step ${r.reachedAt}`}>
                      {' '}
                      ✓ {r.reachedAt}
                    </span>
                  )}
                </td>
                <td className="num" data-testid="sweep-val-loss" data-value={r.bestValLoss ?? ''}>
                  {r.bestValLoss === null ? '—' : formatLoss(r.bestValLoss)}
                </td>
                <td className="num" data-testid="sweep-steps" data-value={r.steps}>
                  {r.steps} / {planned(r.index)}
                </td>
                <td className="num" data-testid="sweep-time" data-value={r.seconds}>
                  {r.steps ? seconds(r.seconds) : '—'}
                </td>
                <td>
                  {r.setting.libraryId && r.steps > 0 && (
                    <button
                      type="button"
                      data-testid="sweep-open"
                      title="Its curves in the comparison view"
                      onClick={() => onOpen(r.setting.libraryId!)}
                    >
                      Open
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
