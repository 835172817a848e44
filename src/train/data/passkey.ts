// Passkey retrieval (needle in a haystack): filler tokens with one needle — a marker token followed
// by a k-token passkey — at a random depth; the sequence ends with a query marker followed by the
// passkey again. Only the passkey tokens after the query marker are scored, so a model has to find
// the needle and copy its key; with the needle beyond the sliding window, only attention that
// reaches further back (NSA's compressed and selected branches, or dense attention) can.
//
// Vocabulary: fillers [0, F), the needle marker F, the query marker F+1, passkey digits
// [F+2, F+2+D). A sequence is T+1 raw tokens (T inputs plus the last target): a haystack of
// R = T−k tokens holding the needle (marker at p, digits at p+1 … p+k), then the query marker at R
// and the digits at R+1 … R+k = T, so the last digit is the last target. The answer positions
// (inputs whose target is a passkey digit: the query marker and the first k−1 answer digits) are
// the same in every sequence: passkeyAnswerPositions.
//
// Depth: the needle's marker sits at p ∈ [round(minDepth·S), round(maxDepth·S)], uniform, where
// S = T − 2k − 1 is the last position at which the needle still ends before the query marker
// (depth 0 = the sequence's first token, 1 = right before the query).
import { type ConfigIssue, InvalidConfigError, prefixIssues } from '../../definitions/config-issue';
import type { RunConfig } from '../config';
import { answerTaskDataset } from './answer-task';
import type { Dataset, DatasetOptions } from './datasets';

export interface PasskeyTask {
  /** Passkey alphabet D (digit tokens, ≥ 2); chance accuracy per answer token is 1/D. */
  digits: number;
  /** Passkey length k (tokens after the needle marker, and after the query marker; ≥ 1). */
  keyLength: number;
  /** Filler tokens F (≥ 1; 1 = a constant filler), drawn uniformly around the needle. */
  fillers: number;
  /** The needle's depth range, fractions in [0, 1] (0 = the sequence's start, 1 = right before the query). */
  minDepth: number;
  maxDepth: number;
}

export type PasskeyDatasetSpec = { kind: 'passkey' } & PasskeyTask;

export interface PasskeyVocab {
  fillerBase: number;
  needle: number;
  query: number;
  digitBase: number;
  size: number;
}

export function passkeyVocab(task: PasskeyTask): PasskeyVocab {
  const needle = task.fillers;
  return { fillerBase: 0, needle, query: needle + 1, digitBase: needle + 2, size: needle + 2 + task.digits };
}

/** One sequence with its structure, for tests and inspection. */
export interface PasskeySequence {
  /** T+1 raw tokens: inputs are raw[0..T−1], targets raw[1..T]. */
  raw: Int32Array;
  /** Position of the needle's marker p; its digits are at p+1 … p+k. */
  needle: number;
  /** Positions of the needle's digits (the stored passkey). */
  keyPositions: number[];
  /** Position of the query marker (T − k); the answer digits follow it. */
  query: number;
  /** Input positions whose target is an answer digit (passkeyAnswerPositions). */
  answerPositions: number[];
  /** The passkey as digit indices in [0, D). */
  key: number[];
}

/** Input positions whose target is a passkey digit: T−k (the query marker), …, T−1 (the last input). */
export function passkeyAnswerPositions(seqLen: number, keyLength: number): number[] {
  return Array.from({ length: keyLength }, (_, i) => seqLen - keyLength + i);
}

/** The last possible needle position S = T − 2k − 1 (the needle then ends right before the query marker). */
export function passkeyLastNeedle(seqLen: number, keyLength: number): number {
  return seqLen - 2 * keyLength - 1;
}

/** The needle positions [lo, hi] the task's depth range allows at this sequence length. */
export function passkeyNeedleRange(task: PasskeyTask, seqLen: number): [number, number] {
  const S = passkeyLastNeedle(seqLen, task.keyLength);
  return [Math.round(task.minDepth * S), Math.round(task.maxDepth * S)];
}

export const PASSKEY_TASK_FIELDS = ['digits', 'keyLength', 'fillers', 'minDepth', 'maxDepth'] as const;

const MIN_INT = { digits: 2, keyLength: 1, fillers: 1 } as const;

/**
 * Every reason the task cannot be generated at this sequence length, each naming its task field
 * (`keyLength`, `maxDepth`…; the run config prefixes `data.passkey.`), the one validator of a
 * passkey task: the run config and the dataset both use it. The fit check is skipped while a field
 * or `seqLen` is not valid (the run config reports a bad seqLen).
 */
export function validatePasskeyTask(task: PasskeyTask, seqLen: number): ConfigIssue[] {
  const bad: ConfigIssue[] = [];
  for (const f of ['digits', 'keyLength', 'fillers'] as const) {
    const v: unknown = task[f];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= MIN_INT[f]))
      bad.push({ field: f, message: `must be an integer ≥ ${MIN_INT[f]} (got ${String(v)})` });
  }
  for (const f of ['minDepth', 'maxDepth'] as const) {
    const v: unknown = task[f];
    if (!(typeof v === 'number' && v >= 0 && v <= 1)) bad.push({ field: f, message: `must be a number in [0, 1] (got ${String(v)})` });
  }
  if (bad.some((i) => i.field === 'minDepth' || i.field === 'maxDepth')) return bad;
  if (task.minDepth > task.maxDepth)
    bad.push({ field: 'minDepth', message: `must not exceed maxDepth (${task.minDepth} > ${task.maxDepth})` });
  if (bad.length || !(Number.isInteger(seqLen) && seqLen >= 1)) return bad;
  const k = task.keyLength;
  if (seqLen < 2 * k + 1)
    bad.push({
      field: 'keyLength',
      message: `${k} needs seqLen ≥ ${2 * k + 1} (the needle: marker and ${k} digits; the query: marker and ${k} digits); seqLen is ${seqLen}`,
    });
  return bad;
}

/** Draws one sequence. Assumes validatePasskeyTask(task, seqLen) is empty. */
export function generatePasskeySequence(task: PasskeyTask, seqLen: number, rand: () => number): PasskeySequence {
  const { digits, keyLength: k, fillers } = task;
  const v = passkeyVocab(task);
  const raw = new Int32Array(seqLen + 1);
  const R = seqLen - k; // the haystack [0, R); the query marker at R
  for (let i = 0; i < R; i++) raw[i] = v.fillerBase + Math.floor(rand() * fillers);
  const [lo, hi] = passkeyNeedleRange(task, seqLen);
  const p = lo + Math.floor(rand() * (hi - lo + 1));
  const key = Array.from({ length: k }, () => Math.floor(rand() * digits));
  raw[p] = v.needle;
  raw[R] = v.query;
  key.forEach((d, i) => {
    raw[p + 1 + i] = v.digitBase + d;
    raw[R + 1 + i] = v.digitBase + d;
  });
  return {
    raw,
    needle: p,
    keyPositions: key.map((_, i) => p + 1 + i),
    query: R,
    answerPositions: passkeyAnswerPositions(seqLen, k),
    key,
  };
}

/** The passkey dataset a run config asks for: its data.passkey task at its batch size, seqLen and seed. */
export function passkeyDatasetForRun(config: RunConfig): Dataset {
  const task = config.data.passkey;
  if (config.data.source !== 'passkey')
    throw new InvalidConfigError('passkey dataset', [
      { field: 'data.source', message: `must be 'passkey' for the passkey dataset (got '${config.data.source}')` },
    ]);
  if (!task)
    throw new InvalidConfigError('passkey dataset', [
      { field: 'data.passkey', message: "is required when data.source is 'passkey' (the task)" },
    ]);
  const issues = validatePasskeyTask(task, config.model.seqLen);
  if (issues.length) throw new InvalidConfigError('passkey dataset', prefixIssues('data.passkey', issues));
  return createPasskeyDataset(
    { kind: 'passkey', ...task },
    { batchSize: config.train.batchSize, seqLen: config.model.seqLen, seed: config.train.seed },
  );
}

export function createPasskeyDataset(spec: PasskeyDatasetSpec, opts: DatasetOptions): Dataset {
  const { seqLen } = opts;
  const issues = validatePasskeyTask(spec, seqLen);
  if (issues.length) throw new InvalidConfigError('passkey dataset', issues);
  const name = `passkey-d${spec.digits}-k${spec.keyLength}-f${spec.fillers}-depth${spec.minDepth}-${spec.maxDepth}`;
  // Only the passkey after the query marker is scored (as the recall task scores its answers):
  // fillers and the needle's own digits are unpredictable by design.
  return answerTaskDataset(
    {
      name,
      vocabSize: passkeyVocab(spec).size,
      sequence: (rand) => {
        const seq = generatePasskeySequence(spec, seqLen, rand);
        return { raw: seq.raw, answers: seq.answerPositions };
      },
      // R = T − k fillers, the needle's position and k digits: T + 1 draws per sequence.
      drawsPerSequence: seqLen + 1,
      answersPerSequence: spec.keyLength,
      answerEntropy: Math.log(spec.digits),
    },
    opts,
  );
}
