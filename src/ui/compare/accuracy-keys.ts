// The comparison's "accuracy against keys read per query": for task runs that differ in attention
// mechanism or budget (n, l′, w, l, d, T), each run's last evaluated answer accuracy against the
// keys a query reads on average under its config (NSA: ncmp(t) + selected + window, averaged over
// t; dense t + 1, the window, MoBA and DSA by src/definitions/keys-read.ts, averaged). Pure: runs
// in, points out.
import { meanKeysRead } from '../../definitions/keys-read';
import type { RunConfig } from '../../train/config';
import { taskChance } from '../../train/eval/task-chance';
import type { EvalMetrics } from '../../train/types';
import { meanKeyReads } from '../config/derived';

export interface AccuracyKeysPoint {
  /** Index of the run in the comparison (its colour). */
  run: number;
  name: string;
  /** Keys read per query, mean over t = 0 … T − 1. */
  keys: number;
  /** The last evaluation's answer accuracy. */
  accuracy: number;
  chance: number;
}

/** Mean keys a query reads under the config's attention (every mechanism; dense (T + 1)/2). */
export function meanKeysPerQuery(c: RunConfig): number {
  const T = c.model.seqLen;
  if (c.model.attention === 'nsa' && c.model.nsa) return meanKeyReads(T, c.model.nsa).total;
  return meanKeysRead(T, c.model) ?? (T + 1) / 2;
}

/** The settings that set how many keys a query reads: the mechanism and its budget. */
function budgetOf(c: RunConfig): string {
  const m = c.model;
  const n = m.nsa;
  const options =
    m.attention === 'nsa' && n
      ? [n.l, n.d, n.lSel, n.nSel, n.w]
      : m.attention === 'window'
        ? m.window
        : m.attention === 'moba'
          ? m.moba
          : null;
  return JSON.stringify([m.attention, m.seqLen, options ?? null]);
}

interface Run {
  name: string;
  config: RunConfig;
  evals: readonly EvalMetrics[];
}

/** One point per task run with an accuracy; empty unless two or more such runs differ in mechanism or budget. */
export function accuracyKeysPoints(runs: readonly Run[]): AccuracyKeysPoint[] {
  const points: AccuracyKeysPoint[] = [];
  const budgets = new Set<string>();
  runs.forEach((r, i) => {
    const chance = taskChance(r.config);
    const last = [...r.evals].reverse().find((e) => e.accuracy !== undefined);
    if (chance === null || last?.accuracy === undefined) return;
    budgets.add(budgetOf(r.config));
    points.push({ run: i, name: r.name, keys: meanKeysPerQuery(r.config), accuracy: last.accuracy, chance });
  });
  return points.length >= 2 && budgets.size >= 2 ? points : [];
}
