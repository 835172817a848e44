// Synthetic token datasets: uniform random tokens (leakage control) and the copy task.
import { InvalidConfigError } from '../../definitions/config-issue';
import { mulberry32, subSeed } from '../../util/random';
import { type Batch, checkBatchShape, createBatch, writeWindow } from './batch';
import type { Dataset, DatasetOptions } from './datasets';
import { TrainStream } from './stream';

/** Fills row[0..] with one sequence; `next` draws a uniform token id. */
type RowFiller = (row: Int32Array, next: () => number) => void;

function uniformToken(rand: () => number, vocabSize: number): () => number {
  return () => Math.floor(rand() * vocabSize);
}

function checkVocab(kind: string, vocabSize: number): void {
  if (!Number.isInteger(vocabSize) || vocabSize < 2)
    throw new InvalidConfigError(`${kind} dataset`, [{ field: 'vocabSize', message: `must be an integer ≥ 2 (got ${vocabSize})` }]);
}

/**
 * A generated dataset: every sequence is drawn fresh, so there is no finite split (trainTokens and
 * valTokens are Infinity). Validation batches come from their own seed stream, regenerated per call.
 */
function generatedDataset(name: string, vocabSize: number, fill: RowFiller, drawsPerRow: number, opts: DatasetOptions): Dataset {
  const { batchSize, seqLen, seed } = opts;
  const row = new Int32Array(seqLen + 1);
  const train = new TrainStream(subSeed(seed, `${name}:train`), batchSize * drawsPerRow, name);
  const fillBatch = (out: Batch, next: () => number) => {
    checkBatchShape(out, batchSize, seqLen);
    for (let b = 0; b < batchSize; b++) {
      fill(row, next);
      writeWindow(out, b, seqLen, row, 0);
    }
  };
  return {
    name,
    vocabSize,
    tokenizer: null,
    trainTokens: Number.POSITIVE_INFINITY,
    valTokens: Number.POSITIVE_INFINITY,
    nextTrainBatch: (out) => train.draw((rand) => fillBatch(out, uniformToken(rand, vocabSize))),
    seekTrain: (batchesDrawn) => train.seek(batchesDrawn),
    validationBatches: (count) => {
      const valToken = uniformToken(mulberry32(subSeed(seed, `${name}:val`)), vocabSize);
      return Array.from({ length: count }, () => {
        const batch = createBatch(batchSize, seqLen);
        fillBatch(batch, valToken);
        return batch;
      });
    },
    // Every token is uniform over the vocabulary (the copy task's marginal too): exactly ln V.
    unigramEntropy: () => Math.log(vocabSize),
  };
}

export function createRandomDataset(vocabSize: number, opts: DatasetOptions): Dataset {
  checkVocab('random', vocabSize);
  return generatedDataset(
    `random-v${vocabSize}`,
    vocabSize,
    (row, next) => {
      for (let i = 0; i < row.length; i++) row[i] = next();
    },
    opts.seqLen + 1,
    opts,
  );
}

/**
 * Copy task: each sequence of T+1 tokens is blocks of `segment` random tokens, each followed by the
 * same tokens again. Default segment ⌊(T+1)/2⌋: the second half repeats the first. Only targets in a
 * repeat block are predictable, so a model without leakage stays at ln V on the random blocks.
 */
/** The tokens drawn per copy-task row of n tokens: those outside the repeat blocks. */
function copyDraws(n: number, seg: number): number {
  let draws = 0;
  for (let i = 0; i < n; i++) if (i % (2 * seg) < seg) draws++;
  return draws;
}

export function createCopyDataset(vocabSize: number, segment: number | undefined, opts: DatasetOptions): Dataset {
  checkVocab('copy', vocabSize);
  const seg = segment ?? Math.floor((opts.seqLen + 1) / 2);
  if (!Number.isInteger(seg) || seg < 1 || 2 * seg > opts.seqLen + 1) {
    const max = Math.floor((opts.seqLen + 1) / 2);
    throw new InvalidConfigError('copy dataset', [
      { field: 'segment', message: `must be an integer in [1, ${max}] (⌊(seqLen+1)/2⌋; got ${seg})` },
    ]);
  }
  return generatedDataset(
    `copy-v${vocabSize}-s${seg}`,
    vocabSize,
    (row, next) => {
      for (let i = 0; i < row.length; i++) {
        row[i] = i % (2 * seg) < seg ? next() : row[i - seg];
      }
    },
    copyDraws(opts.seqLen + 1, seg),
    opts,
  );
}
