// Roles of the tokens of a task sequence as the stepper labels them. Associative recall
// (src/train/data/recall.ts): fillers, stored keys and values, then the queries and their answers;
// and for each query, where its pair was stored and whether the selection of that query reads the
// value. Passkey (src/train/data/passkey.ts): fillers, the needle (its marker and digits), then the
// query marker and the answer digits; and for each scored input, where the needle holds the digit
// it must produce.
import { passkeyAnswerPositions, type PasskeyTask, passkeyVocab } from '../../train/data/passkey';
import type { RecallTask } from '../../train/data/recall';
import { recallVocab } from '../../train/data/recall';

export type TokenRole = 'filler' | 'key' | 'value' | 'query' | 'answer' | 'needle';

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

export interface PasskeyLabels {
  roles: TokenRole[];
  /** Position of the needle's marker (its digits follow it), or null when none is among the tokens. */
  needle: number | null;
  /**
   * Per scored input t (the query marker and the answer digits before the last): the needle
   * position of the digit its target is (needle + 1 + i for the i-th answer).
   */
  sources: Map<number, number>;
  /** Per scored input t: which digit of the key its target is (0-based). */
  digit: Map<number, number>;
}

/**
 * Labels T input tokens of a passkey sequence: the last k inputs are the query marker and the
 * first k − 1 answer digits (the last digit is only a target), the needle's marker and its k
 * digits are 'needle', everything else 'filler'. Returns null when the tokens cannot be such a
 * sequence (another length, ids outside the task, no query marker at T − k).
 */
export function passkeyLabels(tokens: ArrayLike<number>, task: PasskeyTask, seqLen: number): PasskeyLabels | null {
  const T = tokens.length;
  const k = task.keyLength;
  if (T !== seqLen || T < 2 * k + 1) return null;
  const v = passkeyVocab(task);
  const R = T - k;
  if (tokens[R] !== v.query) return null;
  const roles: TokenRole[] = [];
  let needle: number | null = null;
  for (let p = 0; p < T; p++) {
    const id = tokens[p];
    if (id < 0 || id >= v.size) return null;
    if (p === R) roles.push('query');
    else if (p > R) roles.push('answer');
    else if (id === v.needle && needle === null && p + k < R) {
      needle = p;
      roles.push('needle');
    } else roles.push(needle !== null && p <= needle + k ? 'needle' : 'filler');
  }
  const sources = new Map<number, number>();
  const digit = new Map<number, number>();
  passkeyAnswerPositions(T, k).forEach((t, i) => {
    digit.set(t, i);
    if (needle !== null) sources.set(t, needle + 1 + i);
  });
  return { roles, needle, sources, digit };
}
