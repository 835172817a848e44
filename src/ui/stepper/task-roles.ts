// Roles of the tokens of an associative-recall sequence (src/train/data/recall.ts) as the stepper
// labels them: fillers, stored keys and values, then the queries and their answers; and for each
// query, where its pair was stored and whether the selection of that query reads the value.
import type { RecallTask } from '../../train/data/recall';
import { recallVocab } from '../../train/data/recall';

export type TokenRole = 'filler' | 'key' | 'value' | 'query' | 'answer';

export interface RecallPair {
  /** Input positions of the stored key and its value (value = key + 1). */
  key: number;
  value: number;
}

export interface RecallLabels {
  roles: TokenRole[];
  /** Per query position: the stored pair it asks for. */
  pairs: Map<number, RecallPair>;
}

/**
 * Labels T input tokens of a recall sequence: the query region is the last 2m − 1 inputs
 * (query, answer, …, query: the last answer is only a target), the pair region before it.
 * Returns null when the tokens cannot be such a sequence (another length, ids outside the task).
 */
export function recallLabels(tokens: ArrayLike<number>, task: RecallTask, seqLen: number): RecallLabels | null {
  const T = tokens.length;
  if (T !== seqLen) return null;
  const v = recallVocab(task);
  const R = T + 1 - 2 * task.queries;
  if (R < 1) return null;
  const isKey = (id: number) => id >= v.keyBase && id < v.valueBase;
  const isValue = (id: number) => id >= v.valueBase && id < v.size;
  const roles: TokenRole[] = [];
  const keyAt = new Map<number, number>();
  for (let p = 0; p < T; p++) {
    const id = tokens[p];
    if (id < 0 || id >= v.size) return null;
    if (p >= R) roles.push((p - R) % 2 === 0 ? 'query' : 'answer');
    else if (isKey(id)) {
      roles.push('key');
      keyAt.set(id, p);
    } else roles.push(isValue(id) && p > 0 && roles[p - 1] === 'key' ? 'value' : 'filler');
  }
  const pairs = new Map<number, RecallPair>();
  for (let p = R; p < T; p += 2) {
    const k = keyAt.get(tokens[p]);
    if (k !== undefined) pairs.set(p, { key: k, value: k + 1 });
  }
  return { roles, pairs };
}
