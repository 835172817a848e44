// Associative recall (the "needle" task): filler tokens with key→value pairs, then queries. Each
// query is a key seen earlier; the next token (the answer) is that key's value. Queried pairs lie at
// least `minDistance` positions before their query, so with minDistance ≥ w a sliding window of w
// never holds the answer and only attention that reaches further back (NSA's compressed and
// selected branches, or dense attention) can produce it.
//
// Vocabulary: fillers [0, F), keys [F, F+K), values [F+K, F+K+V). A sequence is T+1 raw tokens
// (T inputs plus the last target): a pair region of R = T+1−2m tokens with P pairs (key at p, value
// at p+1, all keys distinct) among random fillers, then m queries "key answer" ending the sequence,
// so the answer of the last query is the last target. The answer positions (inputs whose target is
// an answer) are the same in every sequence: recallAnswerPositions.
import { type ConfigIssue, InvalidConfigError, prefixIssues } from '../../definitions/config-issue';
import type { RunConfig } from '../config';
import { answerTaskDataset } from './answer-task';
import type { Dataset, DatasetOptions } from './datasets';

export interface RecallTask {
  /** Distinct key tokens K (≥ pairs). */
  keys: number;
  /** Value tokens V; chance accuracy is 1/V. */
  values: number;
  /** Filler tokens F (≥ 1; 1 = a constant filler). */
  fillers: number;
  /** Key→value pairs per sequence P (queried ones plus distractors). */
  pairs: number;
  /** Queries at the end of each sequence m (1 ≤ m ≤ P). */
  queries: number;
  /** Every queried value lies at least this many positions before its query (t − p ≥ minDistance). */
  minDistance: number;
  /** Queried keys lie at positions ≥ this (e.g. lSel, to keep them out of NSA's forced block 0); 0 = anywhere. */
  minStart: number;
}

export type RecallDatasetSpec = { kind: 'recall' } & RecallTask;

export interface RecallVocab {
  fillerBase: number;
  keyBase: number;
  valueBase: number;
  size: number;
}

export function recallVocab(task: RecallTask): RecallVocab {
  const keyBase = task.fillers;
  const valueBase = keyBase + task.keys;
  return { fillerBase: 0, keyBase, valueBase, size: valueBase + task.values };
}

/** One sequence with its structure, for tests and inspection. */
export interface RecallSequence {
  /** T+1 raw tokens: inputs are raw[0..T−1], targets raw[1..T]. */
  raw: Int32Array;
  /** Per query i: the input position t_i holding the query key (its target is the answer). */
  queryPositions: number[];
  /** Per query i: where its key and its value were stored. */
  keyPositions: number[];
  valuePositions: number[];
  /** Start positions of every pair (queried and distractor), ascending. */
  pairStarts: number[];
}

/** Input positions whose target is an answer: T+1−2m, T+3−2m, …, T−1 (the last input). */
export function recallAnswerPositions(seqLen: number, queries: number): number[] {
  const q0 = seqLen + 1 - 2 * queries;
  return Array.from({ length: queries }, (_, i) => q0 + 2 * i);
}

export const RECALL_TASK_FIELDS = ['keys', 'values', 'fillers', 'pairs', 'queries', 'minDistance', 'minStart'] as const;

const MIN: Record<keyof RecallTask, number> = { keys: 1, values: 2, fillers: 1, pairs: 1, queries: 1, minDistance: 1, minStart: 0 };

/**
 * Every reason the task cannot be generated at this sequence length, each naming its task field
 * (`pairs`, `minDistance`…; the run config prefixes `data.recall.`), the one validator of a recall
 * task: the run config and the dataset both use it. The fit checks are
 * skipped while a field or `seqLen` is not a valid integer (the run config reports a bad seqLen).
 */
export function validateRecallTask(task: RecallTask, seqLen: number): ConfigIssue[] {
  const bad: ConfigIssue[] = [];
  for (const f of RECALL_TASK_FIELDS) {
    const v: unknown = task[f];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= MIN[f]))
      bad.push({ field: f, message: `must be an integer ≥ ${MIN[f]} (got ${String(v)})` });
  }
  if (bad.length) return bad;
  const { keys, pairs, queries, minDistance, minStart } = task;
  if (pairs > keys) bad.push({ field: 'pairs', message: `must not exceed keys (${pairs} > ${keys}): the keys of a sequence are distinct` });
  if (queries > pairs) bad.push({ field: 'queries', message: `must not exceed pairs (${queries} > ${pairs})` });
  if (!(Number.isInteger(seqLen) && seqLen >= 1)) return bad;
  const R = seqLen + 1 - 2 * queries;
  // Each placed pair blocks at most 3 of the R−1 pair starts, so P pairs always fit when R ≥ 3P.
  if (R < 3 * pairs)
    bad.push({
      field: 'pairs',
      message: `${pairs} pairs need a pair region of at least ${3 * pairs} tokens; seqLen ${seqLen} with ${queries} queries leaves ${R}`,
    });
  // Queried keys sit at p ∈ [minStart, R − minDistance − 1] (value p+1 ≤ t_0 − minDistance, t_0 = R).
  const hi = R - minDistance - 1;
  if (hi - minStart + 1 < 2 * queries - 1)
    bad.push({
      field: 'minDistance',
      message: `minStart ${minStart} and minDistance ${minDistance} leave key positions [${minStart}, ${hi}] at seqLen ${seqLen}: too few for ${queries} non-overlapping pairs`,
    });
  return bad;
}

function shuffle(rand: () => number, a: number[]): number[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** k distinct sorted picks from [0, n) (partial Fisher–Yates). */
function choose(rand: () => number, n: number, k: number): number[] {
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rand() * (n - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k).sort((a, b) => a - b);
}

/**
 * The values generateRecallSequence draws, the same for every sequence: R fillers, m queried
 * positions, P − m distractor positions, P keys (choose) and P − 1 (their shuffle), P values, m − 1
 * (the query order's shuffle); R = T + 1 − 2m.
 */
export function recallDrawsPerSequence(task: RecallTask, seqLen: number): number {
  const R = seqLen + 1 - 2 * task.queries;
  return R + 4 * task.pairs + task.queries - 2;
}

/** Draws one sequence. Assumes validateRecallTask(task, seqLen) is empty. */
export function generateRecallSequence(task: RecallTask, seqLen: number, rand: () => number): RecallSequence {
  const { keys, values, fillers, pairs, queries, minDistance, minStart } = task;
  const v = recallVocab(task);
  const raw = new Int32Array(seqLen + 1);
  const R = seqLen + 1 - 2 * queries;
  for (let i = 0; i < R; i++) raw[i] = v.fillerBase + Math.floor(rand() * fillers);
  const used = new Uint8Array(R);
  // Queried pairs: uniform non-overlapping placement in [minStart, hi+1] (stars and bars: choose
  // m of n−m+1 slots, shift the j-th by j).
  const hi = R - minDistance - 1;
  const slots = hi - minStart + 2 - queries;
  const queried = choose(rand, slots, queries).map((c, j) => minStart + c + j);
  for (const p of queried) used[p] = used[p + 1] = 1;
  const starts = [...queried];
  // Distractors anywhere in the pair region where both cells are free.
  for (let n = queries; n < pairs; n++) {
    const free: number[] = [];
    for (let p = 0; p + 1 < R; p++) if (!used[p] && !used[p + 1]) free.push(p);
    if (free.length === 0) throw new Error('recall: no room left for a distractor pair (validateRecallTask should have caught this)');
    const p = free[Math.floor(rand() * free.length)];
    used[p] = used[p + 1] = 1;
    starts.push(p);
  }
  // Distinct keys, shuffled over the pairs (choose() returns them sorted).
  const keyIds = shuffle(rand, choose(rand, keys, pairs));
  const valueOf = new Map<number, number>();
  starts.forEach((p, n) => {
    const key = v.keyBase + keyIds[n];
    const value = v.valueBase + Math.floor(rand() * values);
    raw[p] = key;
    raw[p + 1] = value;
    valueOf.set(key, value);
  });
  // Queries in a random order of the queried pairs.
  const order = shuffle(
    rand,
    Array.from({ length: queries }, (_, i) => i),
  );
  const queryPositions = recallAnswerPositions(seqLen, queries);
  const keyPositions: number[] = [];
  const valuePositions: number[] = [];
  queryPositions.forEach((t, i) => {
    const p = queried[order[i]];
    raw[t] = raw[p];
    raw[t + 1] = valueOf.get(raw[p])!;
    keyPositions.push(p);
    valuePositions.push(p + 1);
  });
  return { raw, queryPositions, keyPositions, valuePositions, pairStarts: starts.sort((a, b) => a - b) };
}

/** The recall dataset a run config asks for: its data.recall task at its batch size, seqLen and seed. */
export function recallDatasetForRun(config: RunConfig): Dataset {
  const task = config.data.recall;
  if (config.data.source !== 'recall')
    throw new InvalidConfigError('recall dataset', [
      { field: 'data.source', message: `must be 'recall' for the recall dataset (got '${config.data.source}')` },
    ]);
  if (!task)
    throw new InvalidConfigError('recall dataset', [
      { field: 'data.recall', message: "is required when data.source is 'recall' (the task)" },
    ]);
  const issues = validateRecallTask(task, config.model.seqLen);
  if (issues.length) throw new InvalidConfigError('recall dataset', prefixIssues('data.recall', issues));
  return createRecallDataset(
    { kind: 'recall', ...task },
    { batchSize: config.train.batchSize, seqLen: config.model.seqLen, seed: config.train.seed },
  );
}

export function createRecallDataset(spec: RecallDatasetSpec, opts: DatasetOptions): Dataset {
  const { seqLen } = opts;
  const issues = validateRecallTask(spec, seqLen);
  if (issues.length) throw new InvalidConfigError('recall dataset', issues);
  const name = `recall-k${spec.keys}-v${spec.values}-f${spec.fillers}-p${spec.pairs}-q${spec.queries}-d${spec.minDistance}`;
  // Only the answers are scored (as in MQAR): every other target is unpredictable by design (random
  // keys, values, fillers), so scoring it would bury the recall signal in noise.
  return answerTaskDataset(
    {
      name,
      vocabSize: recallVocab(spec).size,
      sequence: (rand) => generateRecallSequence(spec, seqLen, rand).raw,
      drawsPerSequence: recallDrawsPerSequence(spec, seqLen),
      answerPositions: recallAnswerPositions(seqLen, spec.queries),
      answerEntropy: Math.log(spec.values),
    },
    opts,
  );
}
