// Issue 22, item 6: every dataset's training stream jumps to any cursor (src/train/data/stream.ts),
// giving the batch that drawing batches one by one gives; the cursor range and the
// stepsDone · gradAccum rule are refused naming the field.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { datasetForRun } from '../../src/cli/data-node';
import { loadBrownText } from '../../src/train/data/brown-node';
import { type Batch, createBatch, createDataset, type Dataset } from '../../src/train/data/datasets';
import { createPasskeyDataset } from '../../src/train/data/passkey';
import { createRecallDataset } from '../../src/train/data/recall';
import { MAX_TRAIN_CURSOR, streamWordAt, TrainStream } from '../../src/train/data/stream';
import { PASSKEY_TASK } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';
import { RECALL_TASK } from '../../src/train/presets/recall-preset';
import { resumeCursorIssues } from '../../src/train/trainer';
import { seedWord, subSeed } from '../../src/util/random';
import { tempFolders } from '../helpers/temp-dir';

const newFolder = tempFolders('nsa-seek-');

const B = 3;
const T = 64;
const opts = { batchSize: B, seqLen: T, seed: 11 };
const TEXT = Array.from({ length: 30 }, (_, i) => `Document ${i}: the quick brown fox ${'jumps '.repeat(i % 7)}over the lazy dog.`).join(
  '\n\n',
);

function uploadDataset(): Dataset {
  const dir = newFolder('upload');
  const file = join(dir, 'upload.txt');
  writeFileSync(file, TEXT.repeat(4));
  const cfg = preset('tiny');
  return datasetForRun(
    {
      ...cfg,
      model: { ...cfg.model, seqLen: T },
      train: { ...cfg.train, batchSize: B, seed: opts.seed },
      data: { ...cfg.data, source: 'upload' },
    },
    file,
  );
}

const KINDS: [string, () => Dataset][] = [
  ['random', () => createDataset({ kind: 'random', vocabSize: 50 }, opts)],
  ['copy', () => createDataset({ kind: 'copy', vocabSize: 50 }, opts)],
  ['copy (segment 5)', () => createDataset({ kind: 'copy', vocabSize: 50, segment: 5 }, opts)],
  ['text (byte)', () => createDataset({ kind: 'text', name: 'sample', text: TEXT, tokenizer: 'byte' }, opts)],
  ['brown (gpt2)', () => createDataset({ kind: 'text', name: 'brown', text: loadBrownText().slice(0, 200_000), tokenizer: 'gpt2' }, opts)],
  ['uploaded text', uploadDataset],
  ['recall', () => createRecallDataset({ kind: 'recall', ...RECALL_TASK }, opts)],
  [
    'recall (1 query, 1 pair, 8 fillers)',
    () => createRecallDataset({ kind: 'recall', ...RECALL_TASK, pairs: 1, queries: 1, fillers: 8 }, opts),
  ],
  ['passkey', () => createPasskeyDataset({ kind: 'passkey', ...PASSKEY_TASK }, opts)],
];

function draw(ds: Dataset): Batch {
  const out = createBatch(B, T);
  ds.nextTrainBatch(out);
  return out;
}

describe.each(KINDS)('%s: the training stream jumps', (_label, make) => {
  const N = 12;
  const sequential = (() => {
    const ds = make();
    return Array.from({ length: N }, () => draw(ds));
  })();

  it('seekTrain(k) then a draw equals the k-th batch drawn one by one, for every k < 12, in any order', () => {
    const ds = make();
    for (const k of [7, 0, 11, 3, 3, 1, 10]) {
      ds.seekTrain(k);
      const got = draw(ds);
      expect([k, [...got.tokens], [...got.targets]]).toEqual([k, [...sequential[k].tokens], [...sequential[k].targets]]);
      // and the stream goes on from there
      if (k + 1 < N) expect([...draw(ds).tokens]).toEqual([...sequential[k + 1].tokens]);
    }
  });

  // mulberry32 has 2^32 states, so batch k + m·2^32 of any stream is batch k again: drawn one by one
  // or sought, batches 2^40 + k and 2^53 + k are batch k (a check that needs no 2^40 draws).
  it('far cursors (2^40 + k, 2^53) give the batch the one-by-one stream has there, without drawing the ones before', () => {
    const ds = make();
    for (const [cursor, k] of [
      [2 ** 40, 0],
      [2 ** 40 + 3, 3],
      [2 ** 40 + 11, 11],
      [MAX_TRAIN_CURSOR, 0],
    ]) {
      ds.seekTrain(cursor);
      const got = draw(ds);
      expect([cursor, [...got.tokens], [...got.targets]]).toEqual([cursor, [...sequential[k].tokens], [...sequential[k].targets]]);
    }
    // A cursor off the grid (the period is 2^32 / the largest power of 2 dividing drawsPerBatch) is another batch.
    ds.seekTrain(2 ** 40 + 123_457);
    const far = draw(ds);
    ds.seekTrain(2 ** 40 + 123_457);
    expect([...draw(ds).targets]).toEqual([...far.targets]);
    expect(sequential.some((b) => b.tokens.join() === far.tokens.join() && b.targets.join() === far.targets.join())).toBe(false);
  });

  it('a cursor that is not an integer in [0, 2^53] is refused naming batchesDrawn', () => {
    const ds = make();
    for (const bad of [-1, 1.5, Number.NaN, MAX_TRAIN_CURSOR + 2, Number.POSITIVE_INFINITY])
      expect(() => ds.seekTrain(bad), String(bad)).toThrow(/batchesDrawn/);
  });
});

// An independent reference for "batch 2^40 drawn directly": mulberry32's output at draw index j,
// computed in BigInt from its definition (state_j = seed + (j+1)·0x6d2b79f5 mod 2^32, then the hash).
function mulberryAt(seed: number, j: bigint): number {
  const s = Number((BigInt(seedWord(seed)) + (j + 1n) * 0x6d2b79f5n) % 2n ** 32n);
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

describe('batch 2^40 equals the stream drawn directly at that index', () => {
  it('random tokens: token j of batch i is ⌊u(i·B·(T+1) + j) · V⌋', () => {
    const V = 50;
    const ds = createDataset({ kind: 'random', vocabSize: V }, opts);
    const seed = subSeed(opts.seed, `random-v${V}:train`);
    for (const i of [0, 5, 2 ** 40, 2 ** 40 + 2 ** 31 + 1, 2 ** 52 + 3, MAX_TRAIN_CURSOR]) {
      ds.seekTrain(i);
      const got = draw(ds);
      const base = BigInt(i) * BigInt(B * (T + 1));
      for (let b = 0; b < B; b++)
        for (let t = 0; t < T; t++) {
          const j = base + BigInt(b * (T + 1) + t);
          if (got.tokens[b * T + t] !== Math.floor(mulberryAt(seed, j) * V))
            throw new Error(`batch ${i}, row ${b}, position ${t}: ${got.tokens[b * T + t]} ≠ the direct draw`);
        }
    }
  });

  it('streamWordAt is exact mod 2^32 where batch · drawsPerBatch passes 2^53', () => {
    for (const [batch, per] of [
      [2 ** 40, 195],
      [2 ** 53, 4097],
      [2 ** 53 - 1, 3],
    ] as const) {
      const want = Number((BigInt(seedWord(99)) + BigInt(batch) * BigInt(per) * 0x6d2b79f5n) % 2n ** 32n);
      expect(streamWordAt(99, batch, per)).toBe(want);
    }
  });
});

describe('TrainStream', () => {
  it('refuses a batch that drew a different number of values than declared (it could not seek)', () => {
    const s = new TrainStream(1, 4, 'planted');
    s.draw((r) => {
      for (let i = 0; i < 4; i++) r();
    });
    expect(() => s.draw((r) => r())).toThrow(/dataset planted: batch 1 drew 1 random values, expected 4/);
  });
});

describe('resumeCursorIssues: the checkpoint state a config can have reached', () => {
  const cfg = preset('tiny');
  const config = { ...cfg, train: { ...cfg.train, steps: 100, gradAccum: 3 } };
  const fields = (stepsDone: number, batchesDrawn: number) =>
    resumeCursorIssues(config, { stepsDone, batchesDrawn }).map((i) => `${i.field}: ${i.message}`);

  it('accepts stepsDone · gradAccum', () => {
    expect(fields(0, 0)).toEqual([]);
    expect(fields(40, 120)).toEqual([]);
  });

  it('refuses negative, non-integer, > 2^53 and mismatched cursors naming state.batchesDrawn', () => {
    expect(fields(1, -1)).toEqual([expect.stringMatching(/^state\.batchesDrawn: batchesDrawn must be ≥ 0/)]);
    expect(fields(1, 1.5)).toEqual([expect.stringMatching(/^state\.batchesDrawn: batchesDrawn must be an integer/)]);
    expect(fields(1, 2 ** 60)).toEqual([expect.stringMatching(/^state\.batchesDrawn: batchesDrawn must be ≤ 2\^53/)]);
    expect(fields(40, 2 ** 40)).toEqual([`state.batchesDrawn: is ${2 ** 40}, but 40 steps of train.gradAccum 3 draw 120 batches`]);
    expect(fields(40, 121)).toEqual(['state.batchesDrawn: is 121, but 40 steps of train.gradAccum 3 draw 120 batches']);
  });

  it('refuses stepsDone outside [0, train.steps] naming state.stepsDone', () => {
    expect(fields(101, 303)).toEqual([expect.stringMatching(/^state\.stepsDone: must be an integer in \[0, train\.steps = 100\]/)]);
    expect(fields(-1, 0)[0]).toMatch(/^state\.stepsDone/);
  });
});
