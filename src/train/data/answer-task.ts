// The dataset of a synthetic task scored on its answers only (recall, passkey): endless seeded
// sequences, every target but the answers written as IGNORE_TARGET (loss 0, gradient 0), the
// validation batches a separate seed stream regenerated identically on every call. The answers
// may sit at other positions in every sequence (the MQAR layout); the scorer finds them as the
// targets that are not IGNORE_TARGET.
import { IGNORE_TARGET } from '../../definitions/targets';
import { mulberry32, subSeed } from '../../util/random';
import { type Batch, checkBatchShape, createBatch, writeWindow } from './batch';
import type { Dataset, DatasetOptions } from './datasets';
import { TrainStream } from './stream';

export interface AnswerTask {
  /** The dataset's name: the task and its settings (it also seeds the streams). */
  name: string;
  vocabSize: number;
  /**
   * One sequence from the stream: raw holds seqLen + 1 tokens (inputs and targets), answers the
   * input positions whose targets are scored (always answersPerSequence of them).
   */
  sequence(rand: () => number): { raw: ArrayLike<number>; answers: readonly number[] };
  /** How many values sequence() draws from `rand`: always the same, so the stream can seek (stream.ts). */
  drawsPerSequence: number;
  /** How many targets of each sequence are scored (the same in every sequence). */
  answersPerSequence: number;
  /** ln(the answers' alphabet): answers are drawn uniformly. */
  answerEntropy: number;
}

export function answerTaskDataset(task: AnswerTask, opts: DatasetOptions): Dataset {
  const { batchSize, seqLen, seed } = opts;
  const scored = new Uint8Array(seqLen);
  const fill = (out: Batch, rand: () => number) => {
    checkBatchShape(out, batchSize, seqLen);
    for (let b = 0; b < batchSize; b++) {
      const { raw, answers } = task.sequence(rand);
      if (answers.length !== task.answersPerSequence)
        throw new Error(`${task.name}: a sequence has ${answers.length} answers, expected ${task.answersPerSequence}`);
      writeWindow(out, b, seqLen, raw, 0);
      scored.fill(0);
      for (const t of answers) scored[t] = 1;
      for (let t = 0; t < seqLen; t++) if (!scored[t]) out.targets[b * seqLen + t] = IGNORE_TARGET;
    }
  };
  const train = new TrainStream(subSeed(seed, `${task.name}:train`), batchSize * task.drawsPerSequence, task.name);
  return {
    name: task.name,
    vocabSize: task.vocabSize,
    tokenizer: null,
    trainTokens: Number.POSITIVE_INFINITY,
    valTokens: Number.POSITIVE_INFINITY,
    nextTrainBatch: (out) => train.draw((rand) => fill(out, rand)),
    seekTrain: (batchesDrawn) => train.seek(batchesDrawn),
    validationBatches: (count) => {
      const rand = mulberry32(subSeed(seed, `${task.name}:val`));
      return Array.from({ length: count }, () => {
        const batch = createBatch(batchSize, seqLen);
        fill(batch, rand);
        return batch;
      });
    },
    unigramEntropy: () => task.answerEntropy,
    scoredPerSequence: task.answersPerSequence,
  };
}
