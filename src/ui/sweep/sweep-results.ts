// A sweep's results table, per setting (pure): best held-out answer accuracy, best validation loss,
// steps trained, the step its target was reached at, and its training time (the sum of its steps'
// wall-clock times, so a setting continued after a reload counts each step once); and the sort.
import type { RunHistory } from '../../worker/protocol';
import { bestValLoss } from '../library/entry';
import type { Sweep, SweepSetting } from './sweep-plan';

export interface SettingResult {
  index: number;
  setting: SweepSetting;
  bestAccuracy: number | null;
  bestValLoss: number | null;
  steps: number;
  /** The step of the first evaluation at or above the sweep's target, or null. */
  reachedAt: number | null;
  seconds: number;
}

export function settingResult(index: number, setting: SweepSetting, target: number, h: RunHistory | null): SettingResult {
  let bestAccuracy: number | null = null;
  let reachedAt: number | null = null;
  for (const e of h?.evals ?? []) {
    if (e.accuracy === undefined || !Number.isFinite(e.accuracy)) continue;
    if (bestAccuracy === null || e.accuracy > bestAccuracy) bestAccuracy = e.accuracy;
    if (reachedAt === null && e.accuracy >= target) reachedAt = e.step;
  }
  const last = h?.metrics.at(-1);
  return {
    index,
    setting,
    bestAccuracy,
    bestValLoss: h ? bestValLoss(h.evals) : null,
    steps: last ? last.step + 1 : 0,
    reachedAt,
    seconds: (h?.metrics ?? []).reduce((a, m) => a + m.stepMs, 0) / 1000,
  };
}

/** Every setting's result; `history(id)` gives a run's history (the live run's, or the library's), null while unknown. */
export function sweepResults(s: Sweep, history: (libraryId: string) => RunHistory | null): SettingResult[] {
  return s.settings.map((x, i) => settingResult(i, x, s.grid.target, x.libraryId ? history(x.libraryId) : null));
}

export const SORT_KEYS = ['setting', 'bestAccuracy', 'bestValLoss', 'steps', 'seconds'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export interface SortOrder {
  key: SortKey;
  dir: 'asc' | 'desc';
}

/** Sorted copy; settings without a value (not trained yet) always last; ties keep the grid's order. */
export function sortResults(rows: readonly SettingResult[], o: SortOrder): SettingResult[] {
  const value = (r: SettingResult): number | null => (o.key === 'setting' ? r.index : o.key === 'steps' && r.steps === 0 ? null : r[o.key]);
  const sign = o.dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const [x, y] = [value(a), value(b)];
    if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
    return sign * (x - y) || a.index - b.index;
  });
}

/** The first sort of a column: the best first (highest accuracy, lowest loss, fewest steps and seconds). */
export function defaultDirection(key: SortKey): SortOrder['dir'] {
  return key === 'bestAccuracy' ? 'desc' : 'asc';
}
