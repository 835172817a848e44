// The dataset of a synthetic task scored on its answers only (recall, passkey): endless seeded
// sequences, every target but the answers written as IGNORE_TARGET (loss 0, gradient 0), the
// validation batches a separate seed stream regenerated identically on every call.
import { IGNORE_TARGET } from '../../definitions/targets';
import { mulberry32, subSeed } from '../../util/random';
import { type Batch, checkBatchShape, createBatch, writeWindow } from './batch';
import type { Dataset, DatasetOptions } from './datasets';
import { TrainStream } from './stream';

export interface AnswerTask {
  /** The dataset's name: the task and its settings (it also seeds the streams). */
  name: string;
  vocabSize: number;
  /** One sequence of seqLen tokens (inputs and targets: seqLen + 1 tokens) from the stream. */
  sequence(rand: () => number): ArrayLike<number>;
  /** How many values sequence() draws from `rand`: always the same, so the stream can seek (stream.ts). */
  drawsPerSequence: number;
  /** The positions whose targets are scored. */
  answerPositions: readonly number[];
  /** ln(the answers' alphabet): answers are drawn uniformly. */
  answerEntropy: number;
}

export function answerTaskDataset(task: AnswerTask, opts: DatasetOptions): Dataset {
  const { batchSize, seqLen, seed } = opts;
  const scored = new Uint8Array(seqLen);
  for (const t of task.answerPositions) scored[t] = 1;
  const fill = (out: Batch, rand: () => number) => {
    checkBatchShape(out, batchSize, seqLen);
    for (let b = 0; b < batchSize; b++) {
      writeWindow(out, b, seqLen, task.sequence(rand), 0);
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
    scoredPerSequence: task.answerPositions.length,
  };
}
