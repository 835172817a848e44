// Text datasets: split held out by document, tokenize once, sample random windows of T+1 tokens.
import { InvalidConfigError } from '../../definitions/config-issue';
import { mulberry32, subSeed } from '../../util/random';
import { type Batch, checkBatchShape, createBatch, type TokenArray, unigramEntropyOf, writeWindow } from './batch';
import { encodeBytes } from './byte-tokenizer';
import type { Dataset, DatasetOptions } from './datasets';
import { TrainStream } from './stream';
import { createTokenizer, type Tokenizer, type TokenizerName } from './tokenizer';

/**
 * The split does not depend on the run's seed: runs with different seeds on the same text are
 * evaluated on the same held-out documents, so their validation losses compare.
 */
const SPLIT_SEED = 0x5eed_b10c;

/** Documents in a text are separated by a blank line (as in public/data/brown.txt). */
const DOCUMENT_BREAK = /\n[ \t]*\n/;
const JOIN = '\n\n';
const GOLDEN = (Math.sqrt(5) - 1) / 2;

export interface TextSplit {
  train: string;
  val: string;
  /** Number of documents in each part; both 0 when the text had no document breaks. */
  trainDocuments: number;
  valDocuments: number;
  /** True when held out by document, false when by the last characters of a single text. */
  byDocument: boolean;
}

export function splitDocuments(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(DOCUMENT_BREAK)
    .filter((d) => d.trim().length > 0);
}

/**
 * Holds out the last valFraction of documents after a shuffle with a fixed seed (both parts keep
 * their original order). A text with too few documents to hold one out is split by characters: the
 * last valFraction of it.
 */
export function splitTextForValidation(text: string, valFraction: number): TextSplit {
  if (!(valFraction >= 0 && valFraction < 1))
    throw new InvalidConfigError('text split', [{ field: 'valFraction', message: `must be in [0, 1) (got ${valFraction})` }]);
  const docs = splitDocuments(text);
  const nVal = Math.round(docs.length * valFraction);
  if (valFraction === 0 || (nVal >= 1 && nVal < docs.length)) {
    const order = docs.map((_, i) => i);
    const rand = mulberry32(SPLIT_SEED);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    const isVal = new Uint8Array(docs.length);
    for (const i of order.slice(docs.length - nVal)) isVal[i] = 1;
    const train = docs.filter((_, i) => !isVal[i]);
    const val = docs.filter((_, i) => isVal[i]);
    return { train: train.join(JOIN), val: val.join(JOIN), trainDocuments: train.length, valDocuments: val.length, byDocument: true };
  }
  const whole = docs.join(JOIN);
  let cut = Math.floor(whole.length * (1 - valFraction));
  const code = whole.charCodeAt(cut);
  if (code >= 0xdc00 && code <= 0xdfff) cut++; // never split a surrogate pair
  return { train: whole.slice(0, cut), val: whole.slice(cut), trainDocuments: 0, valDocuments: 0, byDocument: false };
}

function tokenize(tokenizer: Tokenizer, text: string): TokenArray {
  if (tokenizer.name === 'byte') return encodeBytes(text);
  const ids = tokenizer.encode(text);
  return tokenizer.vocabSize <= 65536 ? Uint16Array.from(ids) : Int32Array.from(ids);
}

export interface TextDatasetSpec {
  name: string;
  text: string;
  tokenizer: TokenizerName;
  valFraction?: number;
}

export function createTextDataset(spec: TextDatasetSpec, opts: DatasetOptions): Dataset {
  const { batchSize, seqLen, seed } = opts;
  const tokenizer = createTokenizer(spec.tokenizer);
  const split = splitTextForValidation(spec.text, spec.valFraction ?? 0.1);
  const train = tokenize(tokenizer, split.train);
  const val = tokenize(tokenizer, split.val);
  const window = seqLen + 1;
  if (train.length < window) {
    throw new InvalidConfigError(`text '${spec.name}'`, [
      { field: 'text', message: `the training split has ${train.length} ${tokenizer.name} tokens, needs at least seqLen+1 = ${window}` },
    ]);
  }
  if (val.length > 0 && val.length < window) {
    throw new InvalidConfigError(`text '${spec.name}'`, [
      {
        field: 'text',
        message:
          `the validation split has ${val.length} ${tokenizer.name} tokens, needs at least seqLen+1 = ${window} ` +
          '(use a longer text, a shorter sequence, or valFraction 0)',
      },
    ]);
  }
  // One draw per window: batch i is draws [i·B, (i+1)·B) of the stream, so it can seek.
  const stream = new TrainStream(subSeed(seed, `text:${spec.name}:train`), batchSize, spec.name);
  const starts = train.length - window + 1; // window start positions in [0, starts)
  let entropy: number | null = null;
  return {
    name: spec.name,
    vocabSize: tokenizer.vocabSize,
    tokenizer,
    trainTokens: train.length,
    valTokens: val.length,
    nextTrainBatch: (out: Batch) => {
      checkBatchShape(out, batchSize, seqLen);
      stream.draw((rand) => {
        for (let b = 0; b < batchSize; b++) writeWindow(out, b, seqLen, train, Math.floor(rand() * starts));
      });
    },
    seekTrain: (batchesDrawn) => stream.seek(batchesDrawn),
    // Window w starts at frac(w·φ⁻¹) of the split (golden-ratio sequence): spread over the whole
    // validation split, independent of the seed, and validationBatches(n) is a prefix of (n+1).
    validationBatches: (count: number) => {
      if (val.length === 0) return [];
      const positions = val.length - window + 1;
      return Array.from({ length: count }, (_, i) => {
        const batch = createBatch(batchSize, seqLen);
        for (let b = 0; b < batchSize; b++) {
          const w = i * batchSize + b;
          writeWindow(batch, b, seqLen, val, Math.floor(((w * GOLDEN) % 1) * positions));
        }
        return batch;
      });
    },
    unigramEntropy: () => (entropy ??= unigramEntropyOf(train, tokenizer.vocabSize)),
  };
}
