// Associative recall (the "needle" task) in two layouts. Each query is a key seen earlier; the next
// token (the answer) is that key's value. Queried pairs lie at least `minDistance` positions before
// their query, so with minDistance ≥ w a sliding window of w never holds the answer and only
// attention that reaches further back (NSA's compressed and selected branches, or dense attention)
// can produce it.
//
// Vocabulary: fillers [0, F), keys [F, F+K), values [F+K, F+K+V). A sequence is T+1 raw tokens
// (T inputs plus the last target).
//
// 'scattered' (the default): a pair region of R = T+1−2m tokens with P pairs (key at p, value at
// p+1, all keys distinct) among random fillers, then m queries "key answer" ending the sequence,
// so the answer of the last query is the last target. The answer positions are the same in every
// sequence: recallAnswerPositions.
//
// 'mqar' (multi-query associative recall as Zoology lays it out, arXiv 2312.04927): the P pairs
// back to back from minStart (k₁ v₁ k₂ v₂ …), then fillers in which m of the pairs are queried in a
// random order at power-law gaps: query slots s₀ + 2g (s₀ = minStart + 2P − 1 + minDistance, the
// first position at least minDistance after the last value) for m distinct g drawn with weight
// (g + 1)^(a − 1), a = 0.01 (Zoology's power_a), so most queries sit close to the pairs and a few
// far away. The answer positions differ between sequences; the dataset marks them by their targets.
import { type ConfigIssue, InvalidConfigError, prefixIssues } from '../../definitions/config-issue';
import type { RunConfig } from '../config';
import { answerTaskDataset } from './answer-task';
import type { Dataset, DatasetOptions } from './datasets';

/** Where the pairs and queries sit (see the file's head). */
export type RecallLayout = 'scattered' | 'mqar';
export const RECALL_LAYOUTS: readonly RecallLayout[] = ['scattered', 'mqar'];

/** Zoology's power_a: query gap g drawn with weight (g + 1)^(a − 1). */
export const MQAR_POWER_A = 0.01;

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
  /** 'scattered' (absent = scattered) or 'mqar'. */
  layout?: RecallLayout;
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

/** The mqar layout's first query slot s₀ = minStart + 2P − 1 + minDistance. */
export function mqarFirstQuery(task: RecallTask): number {
  return task.minStart + 2 * task.pairs - 1 + task.minDistance;
}

/** The mqar layout's query slots s₀ + 2g, g ∈ [0, S): every slot whose key is an input. */
export function mqarQuerySlots(task: RecallTask, seqLen: number): number {
  return Math.floor((seqLen - 1 - mqarFirstQuery(task)) / 2) + 1;
}

/** Input positions whose target is an answer in the scattered layout: T+1−2m, T+3−2m, …, T−1 (the last input). */
export function recallAnswerPositions(seqLen: number, queries: number): number[] {
  const q0 = seqLen + 1 - 2 * queries;
  return Array.from({ length: queries }, (_, i) => q0 + 2 * i);
}

export const RECALL_TASK_FIELDS = ['keys', 'values', 'fillers', 'pairs', 'queries', 'minDistance', 'minStart'] as const;

const MIN: Record<(typeof RECALL_TASK_FIELDS)[number], number> = {
  keys: 1,
  values: 2,
  fillers: 1,
  pairs: 1,
  queries: 1,
  minDistance: 1,
  minStart: 0,
};

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
  if (task.layout !== undefined && !RECALL_LAYOUTS.includes(task.layout))
    bad.push({ field: 'layout', message: `must be one of ${RECALL_LAYOUTS.join(', ')} (got ${String(task.layout)})` });
  if (bad.length) return bad;
  const { keys, pairs, queries, minDistance, minStart } = task;
  if (pairs > keys) bad.push({ field: 'pairs', message: `must not exceed keys (${pairs} > ${keys}): the keys of a sequence are distinct` });
  if (queries > pairs) bad.push({ field: 'queries', message: `must not exceed pairs (${queries} > ${pairs})` });
  if (!(Number.isInteger(seqLen) && seqLen >= 1)) return bad;
  if (task.layout === 'mqar') {
    // The last query key at s₀ + 2(m − 1) must be an input (≤ T − 1): its answer is a target.
    const s0 = mqarFirstQuery(task);
    if (s0 + 2 * (queries - 1) > seqLen - 1)
      bad.push({
        field: 'minDistance',
        message: `the mqar layout puts ${pairs} pairs from minStart ${minStart} and the first query ${minDistance} after the last value (position ${s0}); ${queries} queries need seqLen ≥ ${s0 + 2 * queries - 1} (got ${seqLen})`,
      });
    return bad;
  }
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
  // mqar: T + 1 fillers, P keys (choose) and P − 1 (their shuffle), P values, S gap keys, P − 1
  // (the shuffle that picks and orders the queried pairs).
  if (task.layout === 'mqar') return seqLen + 4 * task.pairs - 1 + mqarQuerySlots(task, seqLen);
  const R = seqLen + 1 - 2 * task.queries;
  return R + 4 * task.pairs + task.queries - 2;
}

/** Draws one sequence. Assumes validateRecallTask(task, seqLen) is empty. */
export function generateRecallSequence(task: RecallTask, seqLen: number, rand: () => number): RecallSequence {
  return task.layout === 'mqar' ? generateMqarSequence(task, seqLen, rand) : generateScatteredSequence(task, seqLen, rand);
}

/** The mqar layout (the file's head): exactly recallDrawsPerSequence draws. */
function generateMqarSequence(task: RecallTask, seqLen: number, rand: () => number): RecallSequence {
  const { keys, values, fillers, pairs, queries, minStart } = task;
  const v = recallVocab(task);
  const raw = new Int32Array(seqLen + 1);
  for (let i = 0; i <= seqLen; i++) raw[i] = v.fillerBase + Math.floor(rand() * fillers);
  const keyIds = shuffle(rand, choose(rand, keys, pairs));
  const valueIds = keyIds.map(() => Math.floor(rand() * values));
  const pairStarts = keyIds.map((_, n) => minStart + 2 * n);
  pairStarts.forEach((p, n) => {
    raw[p] = v.keyBase + keyIds[n];
    raw[p + 1] = v.valueBase + valueIds[n];
  });
  // m distinct gaps, weight (g + 1)^(a − 1), by Efraimidis–Spirakis: the m largest ln(u)/weight
  // (one draw per slot; equal keys go to the lower slot).
  const S = mqarQuerySlots(task, seqLen);
  const rank = Array.from({ length: S }, (_, g) => ({ g, key: Math.log(rand()) / (g + 1) ** (MQAR_POWER_A - 1) }));
  rank.sort((a, b) => b.key - a.key || a.g - b.g);
  const gaps = rank
    .slice(0, queries)
    .map((r) => r.g)
    .sort((a, b) => a - b);
  const order = shuffle(
    rand,
    Array.from({ length: pairs }, (_, i) => i),
  ).slice(0, queries);
  const s0 = mqarFirstQuery(task);
  const queryPositions = gaps.map((g) => s0 + 2 * g);
  queryPositions.forEach((t, i) => {
    const n = order[i];
    raw[t] = v.keyBase + keyIds[n];
    raw[t + 1] = v.valueBase + valueIds[n];
  });
  return {
    raw,
    queryPositions,
    keyPositions: order.map((n) => pairStarts[n]),
    valuePositions: order.map((n) => pairStarts[n] + 1),
    pairStarts,
  };
}

function generateScatteredSequence(task: RecallTask, seqLen: number, rand: () => number): RecallSequence {
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
  const layout = spec.layout === 'mqar' ? '-mqar' : '';
  const name = `recall${layout}-k${spec.keys}-v${spec.values}-f${spec.fillers}-p${spec.pairs}-q${spec.queries}-d${spec.minDistance}`;
  // Only the answers are scored (as in MQAR): every other target is unpredictable by design (random
  // keys, values, fillers), so scoring it would bury the recall signal in noise.
  return answerTaskDataset(
    {
      name,
      vocabSize: recallVocab(spec).size,
      sequence: (rand) => {
        const seq = generateRecallSequence(spec, seqLen, rand);
        return { raw: seq.raw, answers: seq.queryPositions };
      },
      drawsPerSequence: recallDrawsPerSequence(spec, seqLen),
      answersPerSequence: spec.queries,
      answerEntropy: Math.log(spec.values),
    },
    opts,
  );
}
