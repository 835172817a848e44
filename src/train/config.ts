// Training and run configuration (what a URL hash or a CLI flag set describes), with validation.
import { type ConfigIssue, InvalidConfigError, prefixIssues } from '../definitions/config-issue';
import type { ModelConfig } from '../definitions/model-config';
import { validateModelConfig } from '../definitions/model-config';
import { type PasskeyTask, passkeyVocab, validatePasskeyTask } from './data/passkey';
import { type RecallTask, recallVocab, validateRecallTask } from './data/recall';

export type DataSource = 'brown' | 'random' | 'copy' | 'upload' | 'recall' | 'passkey';
export const DATA_SOURCES: readonly DataSource[] = ['brown', 'random', 'copy', 'upload', 'recall', 'passkey'];
export type TokenizerName = 'byte' | 'gpt2';

export interface DataConfig {
  source: DataSource;
  /** Text sources (brown, upload) only; synthetic sources use token ids directly. */
  tokenizer: TokenizerName;
  /** The associative-recall task (src/train/data/recall.ts): present exactly when source is 'recall'. */
  recall?: RecallTask;
  /** The passkey (needle-in-a-haystack) task (src/train/data/passkey.ts): present exactly when source is 'passkey'. */
  passkey?: PasskeyTask;
}

export interface TrainConfig {
  steps: number;
  batchSize: number;
  /** Micro-batches per optimizer step. */
  gradAccum: number;
  lrMax: number;
  lrMin: number;
  warmupSteps: number;
  /** Warmup starts at lrMax × this (> 0, so step 0 already learns). */
  warmupStartFraction: number;
  weightDecay: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** Global gradient-norm clip; 0 disables. */
  gradClip: number;
  seed: number;
  evalEvery: number;
  evalBatches: number;
  logEvery: number;
  /**
   * Divergence guard (src/train/divergence.ts): the run stops when the training loss stays above
   * divergenceFactor × ln(model.vocabSize) for divergenceSteps consecutive steps. Optional: absent
   * means the defaults (3 and 5, DIVERGENCE_DEFAULTS); 0 turns the guard off.
   */
  divergenceFactor?: number;
  divergenceSteps?: number;
  /**
   * Sequence-length warm-up (src/train/data/short-seq.ts): the run's first shortSeqSteps optimizer
   * steps train on sequences of shortSeqLen tokens (same model, optimizer and learning-rate
   * schedule; every evaluation at model.seqLen), the rest at model.seqLen. Optional: absent or 0 is off.
   */
  shortSeqSteps?: number;
  /** The warm-up's sequence length, in [1, model.seqLen − 1]; required when shortSeqSteps > 0 (0 or absent otherwise). */
  shortSeqLen?: number;
  /**
   * A recall task's pairs in the warm-up's sequences, in [1, data.recall.pairs] (its queries: at
   * most as many); 0 or absent: the task's own. A curriculum as Zoology's MQAR mixes pair counts:
   * few pairs at the short length first.
   */
  shortSeqPairs?: number;
}

export interface RunConfig {
  model: ModelConfig;
  train: TrainConfig;
  data: DataConfig;
}

/** Every problem of the training settings, each naming its field (`train.*`); empty: valid. */
export function validateTrainConfig(t: TrainConfig): ConfigIssue[] {
  const errs: ConfigIssue[] = [];
  const int = (f: keyof TrainConfig, min: number) => {
    const v = t[f];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= min))
      errs.push({ field: `train.${f}`, message: `must be an integer ≥ ${min} (got ${String(v)})` });
  };
  const num = (f: keyof TrainConfig, lo: number, hi: number, loOpen = false, hiOpen = false) => {
    const v = t[f];
    const ok = typeof v === 'number' && Number.isFinite(v) && (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi);
    if (!ok)
      errs.push({ field: `train.${f}`, message: `must be in ${loOpen ? '(' : '['}${lo}, ${hi}${hiOpen ? ')' : ']'} (got ${String(v)})` });
  };
  int('steps', 1);
  int('batchSize', 1);
  int('gradAccum', 1);
  int('warmupSteps', 0);
  int('seed', 0);
  int('evalEvery', 0);
  int('evalBatches', 0);
  int('logEvery', 1);
  num('lrMax', 0, 10, true);
  num('lrMin', 0, 10);
  num('warmupStartFraction', 0, 1, true);
  num('weightDecay', 0, 10);
  num('beta1', 0, 1, false, true);
  num('beta2', 0, 1, false, true);
  num('eps', 0, 1, true);
  num('gradClip', 0, 1e6);
  // The divergence guard's fields are optional (defaults in src/train/divergence.ts).
  const f = t.divergenceFactor;
  if (f !== undefined && !(typeof f === 'number' && Number.isFinite(f) && (f === 0 || (f > 1 && f <= 1e6))))
    errs.push({ field: 'train.divergenceFactor', message: `must be 0 (no guard) or in (1, 1e6] (got ${String(f)})` });
  if (t.divergenceSteps !== undefined) int('divergenceSteps', 1);
  // Seeds are exact integers: past 2^53 − 1 neighbouring seeds are the same double.
  if (Number.isInteger(t.seed) && t.seed > Number.MAX_SAFE_INTEGER)
    errs.push({ field: 'train.seed', message: `must be at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1; got ${t.seed})` });
  if (typeof t.lrMin === 'number' && typeof t.lrMax === 'number' && t.lrMin > t.lrMax)
    errs.push({ field: 'train.lrMin', message: `must not exceed lrMax (${t.lrMin} > ${t.lrMax})` });
  if (t.shortSeqSteps !== undefined) {
    int('shortSeqSteps', 0);
    if (Number.isInteger(t.shortSeqSteps) && Number.isInteger(t.steps) && t.shortSeqSteps > t.steps)
      errs.push({ field: 'train.shortSeqSteps', message: `must not exceed steps (${t.shortSeqSteps} > ${t.steps})` });
  }
  if (t.shortSeqLen !== undefined) int('shortSeqLen', 0);
  if (t.shortSeqPairs !== undefined) int('shortSeqPairs', 0);
  return errs;
}

/** The sequence-length warm-up's steps (0: none; src/train/data/short-seq.ts). */
export function shortSeqSteps(t: TrainConfig): number {
  return t.shortSeqSteps && t.shortSeqLen ? t.shortSeqSteps : 0;
}

/**
 * The run config the warm-up's steps train: model.seqLen = train.shortSeqLen and, with
 * train.shortSeqPairs, a recall task of that many pairs (and at most as many queries); the rest the same.
 */
export function shortSeqConfig(c: RunConfig): RunConfig {
  if (!shortSeqSteps(c.train)) throw new Error('shortSeqConfig: the run has no sequence-length warm-up (train.shortSeqSteps, shortSeqLen)');
  return atShortSeq(c, c.train.shortSeqLen!);
}

/** `c` at sequence length `len`, with the warm-up's recall pairs where train.shortSeqPairs says. */
function atShortSeq(c: RunConfig, len: number): RunConfig {
  const pairs = c.train.shortSeqPairs;
  const recall = c.data.recall;
  const data = pairs && recall ? { ...c.data, recall: { ...recall, pairs, queries: Math.min(recall.queries, pairs) } } : c.data;
  return { ...c, data, model: { ...c.model, seqLen: len } };
}

/**
 * train.shortSeqLen against the model and the task: required when shortSeqSteps > 0, below
 * model.seqLen, and a length the model and the task both accept (their issues at that length,
 * each named under train.shortSeqLen).
 */
function validateShortSeq(c: RunConfig): ConfigIssue[] {
  const { shortSeqSteps: steps, shortSeqLen: len, shortSeqPairs: pairs } = c.train;
  const warm = typeof steps === 'number' && Number.isInteger(steps) && steps > 0;
  if (typeof pairs === 'number' && Number.isInteger(pairs) && pairs > 0) {
    const field = 'train.shortSeqPairs';
    if (!c.data.recall) return [{ field, message: `only a recall task has pairs (data.source is '${c.data.source}'); 0 or absent` }];
    if (!warm)
      return [{ field, message: `sets the warm-up's pairs: it needs train.shortSeqSteps > 0 (got ${String(steps ?? 0)}); 0 or absent` }];
    if (pairs > c.data.recall.pairs)
      return [
        { field, message: `must not exceed data.recall.pairs ${c.data.recall.pairs} (got ${pairs}): the warm-up is the easier task` },
      ];
  }
  if (!warm) return [];
  if (len === undefined || len === 0)
    return [
      { field: 'train.shortSeqLen', message: `is required (≥ 1) when train.shortSeqSteps is ${steps} (the warm-up's sequence length)` },
    ];
  if (!Number.isInteger(len) || len < 1 || !Number.isInteger(c.model.seqLen)) return []; // reported by validateTrainConfig / the model
  if (len >= c.model.seqLen) return [{ field: 'train.shortSeqLen', message: `must be below model.seqLen ${c.model.seqLen} (got ${len})` }];
  const short = atShortSeq(c, len);
  const atLen = [...validateModelConfig(short.model), ...validateRecallData(short), ...validatePasskeyData(short)];
  return atLen.map((i) => ({ field: 'train.shortSeqLen', message: `${len} does not fit: ${i.field} ${i.message}` }));
}

/** Every problem of a run config (model, train and data), each naming its field; empty: valid. */
export function validateRunConfig(c: RunConfig): ConfigIssue[] {
  const errs = [...validateModelConfig(c.model), ...validateTrainConfig(c.train)];
  if (!DATA_SOURCES.includes(c.data.source)) errs.push({ field: 'data.source', message: `must be one of ${DATA_SOURCES.join(', ')}` });
  if (c.data.tokenizer !== 'byte' && c.data.tokenizer !== 'gpt2')
    errs.push({ field: 'data.tokenizer', message: "must be 'byte' or 'gpt2'" });
  const vocab = c.data.tokenizer === 'gpt2' ? 50257 : 256;
  if ((c.data.source === 'brown' || c.data.source === 'upload') && c.model.vocabSize < vocab)
    errs.push({ field: 'model.vocabSize', message: `must be ≥ ${vocab} for the ${c.data.tokenizer} tokenizer (got ${c.model.vocabSize})` });
  errs.push(...validateRecallData(c), ...validatePasskeyData(c));
  if (!errs.length) errs.push(...validateShortSeq(c));
  return errs;
}

/** data.recall: required by the recall source (and only there), valid, fitting model.seqLen and the vocabulary. */
function validateRecallData(c: RunConfig): ConfigIssue[] {
  const task = c.data.recall;
  if (c.data.source !== 'recall') {
    return task === undefined
      ? []
      : [{ field: 'data.recall', message: `is only used with data.source 'recall' (source is '${c.data.source}'): remove it` }];
  }
  if (typeof task !== 'object' || task === null)
    return [
      {
        field: 'data.recall',
        message: "is required when data.source is 'recall' (the task: keys, values, fillers, pairs, queries, minDistance, minStart)",
      },
    ];
  const errs = prefixIssues('data.recall', validateRecallTask(task, c.model.seqLen));
  // The vocabulary check needs the three token counts (their own errors are reported above).
  const countsOk = (['fillers', 'keys', 'values'] as const).every((f) => Number.isInteger(task[f]));
  const size = recallVocab(task).size;
  if (countsOk && c.model.vocabSize < size)
    errs.push({
      field: 'model.vocabSize',
      message: `must be ≥ ${size} for the recall task (fillers + keys + values; got ${c.model.vocabSize})`,
    });
  return errs;
}

/** data.passkey: required by the passkey source (and only there), valid, fitting model.seqLen and the vocabulary. */
function validatePasskeyData(c: RunConfig): ConfigIssue[] {
  const task = c.data.passkey;
  if (c.data.source !== 'passkey') {
    return task === undefined
      ? []
      : [{ field: 'data.passkey', message: `is only used with data.source 'passkey' (source is '${c.data.source}'): remove it` }];
  }
  if (typeof task !== 'object' || task === null)
    return [
      {
        field: 'data.passkey',
        message: "is required when data.source is 'passkey' (the task: digits, keyLength, fillers, minDepth, maxDepth)",
      },
    ];
  const errs = prefixIssues('data.passkey', validatePasskeyTask(task, c.model.seqLen));
  // The vocabulary check needs the two token counts (their own errors are reported above).
  const countsOk = (['fillers', 'digits'] as const).every((f) => Number.isInteger(task[f]));
  const size = passkeyVocab(task).size;
  if (countsOk && c.model.vocabSize < size)
    errs.push({
      field: 'model.vocabSize',
      message: `must be ≥ ${size} for the passkey task (fillers + 2 markers + digits; got ${c.model.vocabSize})`,
    });
  return errs;
}

/** Throws an InvalidConfigError naming every bad field of the run config (`context` is its first line). */
export function assertValidRunConfig(c: RunConfig, context = 'invalid run config'): void {
  const issues = validateRunConfig(c);
  if (issues.length) throw new InvalidConfigError(context, issues);
}
