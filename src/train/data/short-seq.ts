// The sequence-length warm-up's data (train.shortSeqSteps, train.shortSeqLen; docs/models-and-tasks.md,
// "Sequence-length warm-up"): the run's first shortSeqSteps · gradAccum training batches come from the
// same source built at shortSeqLen, every later one (and every validation batch) from the source at
// model.seqLen. Each of the two keeps its own seeded stream, and training batch i is batch i of the
// stream its phase reads — the warm-up's batches 0 … W − 1 of the short stream, then batches W, W + 1 …
// of the full one — so a run resumed at any cursor (seekTrain) draws the bits an uninterrupted run drew.
import { type RunConfig, shortSeqConfig, shortSeqSteps } from '../config';
import type { Batch, Dataset } from './datasets';

/** A dataset with a sequence-length warm-up: which length the next training batch has. */
export interface ShortSeqDataset extends Dataset {
  /** Training batches drawn at the short length before the full-length ones (shortSeqSteps · gradAccum). */
  readonly shortBatches: number;
  readonly shortSeqLen: number;
  /**
   * Scored targets per warm-up sequence (a task source; absent: every position): the short plan's
   * loss divides by it, and a recall warm-up on fewer pairs (train.shortSeqPairs) scores fewer answers.
   */
  readonly shortScoredPerSequence?: number;
  /** The sequence length of the next nextTrainBatch: shortSeqLen during the warm-up, else model.seqLen. */
  readonly nextSeqLen: number;
}

/** True when `d` has a sequence-length warm-up (its training batches change length). */
export function isShortSeqDataset(d: Dataset): d is ShortSeqDataset {
  return 'shortBatches' in d;
}

/**
 * The run's dataset: `build(config)` as it is, or — with a sequence-length warm-up — the pair of
 * `build(config at shortSeqLen)` and `build(config)` drawn as the header says.
 */
export function withShortSeq(config: RunConfig, build: (c: RunConfig) => Dataset): Dataset {
  const full = build(config);
  const steps = shortSeqSteps(config.train);
  if (!steps) return full;
  const short = build(shortSeqConfig(config));
  const shortBatches = steps * config.train.gradAccum;
  let cursor = 0;
  const staged: ShortSeqDataset = {
    name: full.name,
    vocabSize: full.vocabSize,
    tokenizer: full.tokenizer,
    trainTokens: full.trainTokens,
    valTokens: full.valTokens,
    scoredPerSequence: full.scoredPerSequence,
    shortBatches,
    shortSeqLen: config.train.shortSeqLen!,
    shortScoredPerSequence: short.scoredPerSequence,
    get nextSeqLen() {
      return cursor < shortBatches ? config.train.shortSeqLen! : config.model.seqLen;
    },
    nextTrainBatch(out: Batch) {
      // The full stream's first draw is its batch shortBatches (seeked when the warm-up ends).
      if (cursor === shortBatches) full.seekTrain(shortBatches);
      (cursor < shortBatches ? short : full).nextTrainBatch(out);
      cursor++;
    },
    seekTrain(batchesDrawn: number) {
      full.seekTrain(batchesDrawn); // validates the cursor, naming batchesDrawn
      short.seekTrain(Math.min(batchesDrawn, shortBatches));
      cursor = batchesDrawn;
    },
    validationBatches: (count) => full.validationBatches(count),
    unigramEntropy: () => full.unigramEntropy(),
  };
  return staged;
}
