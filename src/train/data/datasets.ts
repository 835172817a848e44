// Training data: the dataset spec, the Dataset interface and its factory. Runs in Node and in a worker.
import { type Batch, createBatch } from './batch';
import { createCopyDataset, createRandomDataset } from './synthetic';
import { createTextDataset } from './text';
import type { Tokenizer, TokenizerName } from './tokenizer';

export type { Batch };
export { createBatch };
export { splitDocuments, splitTextForValidation, type TextSplit } from './text';

export type DatasetSpec =
  | { kind: 'random'; vocabSize: number } // uniform random tokens: the leakage control
  | { kind: 'copy'; vocabSize: number; segment?: number } // second half of each sequence repeats the first half
  | { kind: 'text'; name: string; text: string; tokenizer: TokenizerName; valFraction?: number }; // Brown, an uploaded file

export interface DatasetOptions {
  batchSize: number;
  seqLen: number;
  seed: number;
}

export interface Dataset {
  readonly name: string;
  readonly vocabSize: number;
  readonly tokenizer: Tokenizer | null; // null for synthetic token datasets
  /** Tokens in each split; Infinity for generated (random, copy) datasets. */
  readonly trainTokens: number;
  readonly valTokens: number;
  /** Next training batch into the given arrays (no allocation), seeded and deterministic. */
  nextTrainBatch(out: Batch): void;
  /**
   * Positions the training stream so the next nextTrainBatch is batch `batchesDrawn` (0-based), in
   * O(1) whatever the cursor (src/train/data/stream.ts): the same batch as drawing them one by one.
   * A cursor that is not an integer in [0, 2^53] is a RangeError naming batchesDrawn.
   */
  seekTrain(batchesDrawn: number): void;
  /** A fixed set of validation batches (same every call). Empty when there is no validation split. */
  validationBatches(count: number): Batch[];
  /** Unigram entropy (nats/token) of the scored targets: the loss a context-free model can reach. */
  unigramEntropy(): number;
  /**
   * When set, only this many targets of each sequence are scored (always the same positions); the
   * others hold IGNORE_TARGET and the loss is the mean over the scored ones. Absent: all seqLen.
   */
  readonly scoredPerSequence?: number;
}

function checkOptions(opts: DatasetOptions): void {
  const bad: string[] = [];
  if (!Number.isInteger(opts.batchSize) || opts.batchSize < 1) bad.push(`batchSize must be a positive integer, got ${opts.batchSize}`);
  if (!Number.isInteger(opts.seqLen) || opts.seqLen < 1) bad.push(`seqLen must be a positive integer, got ${opts.seqLen}`);
  if (!Number.isInteger(opts.seed)) bad.push(`seed must be an integer, got ${opts.seed}`);
  if (bad.length > 0) throw new Error(`dataset options: ${bad.join('; ')}`);
}

export function createDataset(spec: DatasetSpec, opts: DatasetOptions): Dataset {
  checkOptions(opts);
  switch (spec.kind) {
    case 'random':
      return createRandomDataset(spec.vocabSize, opts);
    case 'copy':
      return createCopyDataset(spec.vocabSize, spec.segment, opts);
    case 'text':
      return createTextDataset(spec, opts);
    default:
      throw new Error(`unknown dataset kind '${(spec as { kind: string }).kind}'`);
  }
}
