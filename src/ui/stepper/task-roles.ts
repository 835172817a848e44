// Roles of the tokens of a task sequence as the stepper labels them. Associative recall
// (src/train/data/recall.ts): fillers, stored keys and values, then the queries and their answers;
// and for each query, where its pair was stored and whether the selection of that query reads the
// value. Passkey (src/train/data/passkey.ts): fillers, the needle (its marker and digits), then the
// query marker and the answer digits; and for each scored input, where the needle holds the digit
// it must produce.
import { passkeyAnswerPositions, type PasskeyTask, passkeyVocab } from '../../train/data/passkey';
import type { RecallTask } from '../../train/data/recall';
import { recallAnswerPositions, recallVocab } from '../../train/data/recall';

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
 * Labels T input tokens of a recall sequence, in either layout (src/train/data/recall.ts): a key's
 * first occurrence is a stored key and the value after it its value; a later occurrence of the
 * same key is a query and the token after it its answer (the last query's answer is only a target).
 * Returns null when the tokens cannot be such a sequence (another length, ids outside the task).
 */
export function recallLabels(tokens: ArrayLike<number>, task: RecallTask, seqLen: number): RecallLabels | null {
  const T = tokens.length;
  if (T !== seqLen) return null;
  const v = recallVocab(task);
  const isKey = (id: number) => id >= v.keyBase && id < v.valueBase;
  const isValue = (id: number) => id >= v.valueBase && id < v.size;
  const roles: TokenRole[] = [];
  const keyAt = new Map<number, number>();
  const pairs = new Map<number, RecallPair>();
  for (let p = 0; p < T; p++) {
    const id = tokens[p];
    if (id < 0 || id >= v.size) return null;
    const stored = keyAt.get(id);
    if (isKey(id) && stored !== undefined) {
      roles.push('query');
      pairs.set(p, { key: stored, value: stored + 1 });
    } else if (isKey(id)) {
      roles.push('key');
      keyAt.set(id, p);
    } else if (isValue(id) && p > 0 && roles[p - 1] === 'key') roles.push('value');
    else if (isValue(id) && p > 0 && roles[p - 1] === 'query') roles.push('answer');
    else roles.push('filler');
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

/** The nearest position after (dir 1) or before (dir −1) t whose role is `role`, or null when there is none. */
export function nextWithRole(roles: readonly TokenRole[], t: number, role: TokenRole, dir: 1 | -1): number | null {
  for (let p = t + dir; p >= 0 && p < roles.length; p += dir) if (roles[p] === role) return p;
  return null;
}

/**
 * Where the stepper opens: the last scored answer position of a task sequence (the query whose
 * prediction is the last answer; recall: the last query, passkey: the input before the last digit),
 * else the last query t = T − 1.
 */
export function openingT(T: number, task: { recall?: RecallTask; passkey?: PasskeyTask }): number {
  if (T <= 0) return 0;
  // The mqar layout's queries move from sequence to sequence: it opens on T − 1 (the labels find its queries).
  const scored = task.recall
    ? task.recall.layout === 'mqar'
      ? []
      : recallAnswerPositions(T, task.recall.queries)
    : task.passkey
      ? passkeyAnswerPositions(T, task.passkey.keyLength)
      : [];
  const last = scored.at(-1);
  return last !== undefined && last >= 0 && last < T ? last : T - 1;
}
