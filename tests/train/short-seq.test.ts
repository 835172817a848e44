// The sequence-length warm-up's data and config (train.shortSeqSteps, shortSeqLen;
// src/train/data/short-seq.ts): the first shortSeqSteps · gradAccum training batches are batches
// 0 … W − 1 of the task built at shortSeqLen, later ones batches W, W + 1 … of the task at
// model.seqLen, validation batches always at model.seqLen; seeking to any cursor draws what drawing
// batch by batch drew; without a warm-up the dataset is the source itself. A recall task's warm-up
// with train.shortSeqPairs draws the task built with that many pairs at shortSeqLen. The run config
// refuses a warm-up that cannot run, naming train.shortSeqSteps, shortSeqLen or shortSeqPairs, and
// `--set` reaches all three.
import { describe, expect, it } from 'vitest';

import { applySet } from '../../src/cli/config-set';
import { datasetForRun } from '../../src/cli/data-node';
import { type RunConfig, shortSeqConfig, shortSeqSteps, validateRunConfig } from '../../src/train/config';
import { createBatch, type Dataset } from '../../src/train/data/datasets';
import { passkeyDatasetForRun } from '../../src/train/data/passkey';
import { recallDatasetForRun } from '../../src/train/data/recall';
import { isShortSeqDataset, withShortSeq } from '../../src/train/data/short-seq';
import { mqarPresetConfig } from '../../src/train/presets/mqar-preset';
import { passkeyPreset } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';

const T = 64;
const T0 = 32;
const WARM = 3; // steps
const ACCUM = 2;

function warmConfig(): RunConfig {
  const c = passkeyPreset(); // T = 64, needle depth [0.15, 0.8] of S: fits T0 = 32 as well
  c.train = { ...c.train, steps: 10, gradAccum: ACCUM, batchSize: 2, shortSeqSteps: WARM, shortSeqLen: T0 };
  return c;
}

/** The next n training batches of `d`, each in arrays of its own length. */
function draw(d: Dataset, seqLens: number[]): { tokens: number[]; targets: number[] }[] {
  return seqLens.map((len) => {
    const b = createBatch(2, len);
    d.nextTrainBatch(b);
    return { tokens: [...b.tokens], targets: [...b.targets] };
  });
}

const lengths = (from: number, n: number) => Array.from({ length: n }, (_, i) => (from + i < WARM * ACCUM ? T0 : T));
const errorsOf = (c: RunConfig) => validateRunConfig(c).map((e) => `${e.field}: ${e.message}`);

describe('sequence-length warm-up: data', () => {
  it('the warm-up batches are the short task stream, then the full stream from batch W on; validation at full length', () => {
    const c = warmConfig();
    const d = withShortSeq(c, passkeyDatasetForRun);
    expect(isShortSeqDataset(d) && [d.shortBatches, d.shortSeqLen]).toEqual([WARM * ACCUM, T0]);
    const n = WARM * ACCUM + 4;
    const seen: number[] = [];
    const got = lengths(0, n).map((len) => {
      if (isShortSeqDataset(d)) seen.push(d.nextSeqLen);
      return draw(d, [len])[0];
    });
    expect(seen).toEqual(lengths(0, n));
    const short = passkeyDatasetForRun(shortSeqConfig(c));
    const full = passkeyDatasetForRun(c);
    const want = [...draw(short, lengths(0, WARM * ACCUM)), ...(full.seekTrain(WARM * ACCUM), draw(full, Array(4).fill(T)))];
    expect(got).toEqual(want);
    // The two phases' batches differ (not one stream cut short): the full stream's batch W is not its batch 0.
    full.seekTrain(0);
    expect(draw(full, [T])[0]).not.toEqual(got[WARM * ACCUM]);
    for (const v of d.validationBatches(2)) expect(v.tokens.length).toBe(2 * T);
    expect(d.validationBatches(2)).toEqual(passkeyDatasetForRun(c).validationBatches(2));
  });

  it('seekTrain to any cursor (inside the warm-up, at its end, past it) draws what drawing batch by batch drew', () => {
    const c = warmConfig();
    const n = WARM * ACCUM + 3;
    const sequential = draw(withShortSeq(c, passkeyDatasetForRun), lengths(0, n));
    for (const at of [0, 1, WARM * ACCUM - 1, WARM * ACCUM, WARM * ACCUM + 2]) {
      const d = withShortSeq(c, passkeyDatasetForRun);
      draw(d, lengths(0, 2)); // a cursor somewhere else first
      d.seekTrain(at);
      expect(draw(d, lengths(at, n - at)), `seek ${at}`).toEqual(sequential.slice(at));
    }
    expect(() => withShortSeq(c, passkeyDatasetForRun).seekTrain(-1)).toThrow(/batchesDrawn/);
  });

  it('without a warm-up (fields absent, or 0 steps) the dataset is the source itself; the CLI builds the staged one', () => {
    const plain = passkeyPreset();
    const d = passkeyDatasetForRun(plain);
    expect(withShortSeq(plain, () => d)).toBe(d);
    plain.train.shortSeqSteps = 0;
    plain.train.shortSeqLen = T0;
    expect(shortSeqSteps(plain.train)).toBe(0);
    expect(withShortSeq(plain, () => d)).toBe(d);
    expect(isShortSeqDataset(datasetForRun(warmConfig()))).toBe(true);
    expect(isShortSeqDataset(datasetForRun(passkeyPreset()))).toBe(false);
  });
});

describe('sequence-length warm-up: a recall task with fewer pairs (train.shortSeqPairs)', () => {
  // mqar-tiny (T = 64, 8 pairs, 8 queries), warmed up at 48 tokens on 3 pairs (3 queries).
  function pairsConfig(): RunConfig {
    const c = mqarPresetConfig('mqar-tiny');
    c.train = { ...c.train, steps: 10, batchSize: 2, shortSeqSteps: 2, shortSeqLen: 48, shortSeqPairs: 3 };
    return c;
  }

  it('the warm-up batches are those of the task built with that many pairs (and queries) at shortSeqLen, bit for bit', () => {
    const c = pairsConfig();
    expect(validateRunConfig(c)).toEqual([]);
    const short = shortSeqConfig(c);
    expect([short.model.seqLen, short.data.recall!.pairs, short.data.recall!.queries]).toEqual([48, 3, 3]);
    expect({ ...short.data.recall, pairs: 8, queries: 8 }).toEqual(c.data.recall); // nothing else changes
    const d = datasetForRun(c);
    const got = draw(d, [48, 48, 64]);
    const want = draw(recallDatasetForRun(short), [48, 48]);
    const full = recallDatasetForRun(c);
    full.seekTrain(2);
    expect(got).toEqual([...want, ...draw(full, [64])]);
    // 3 answers scored per warm-up sequence (targets other than -1), 8 per full one.
    const scored = (b: { targets: number[] }) => b.targets.filter((t) => t >= 0).length;
    expect(got.map((b) => scored(b) / 2)).toEqual([3, 3, 8]);
    // Without the field the warm-up keeps the task's 8 pairs (at 48 tokens they do not fit; at 60 they do).
    const own = pairsConfig();
    own.train = { ...own.train, shortSeqPairs: 0, shortSeqLen: 60 };
    expect(shortSeqConfig(own).data.recall).toEqual(own.data.recall);
    // Queries never exceed the warm-up's pairs, nor the task's queries.
    const fewQueries = pairsConfig();
    fewQueries.data.recall!.queries = 2;
    expect(shortSeqConfig(fewQueries).data.recall!.queries).toBe(2);
  });

  it('refuses pairs the warm-up cannot use, naming train.shortSeqPairs (or shortSeqLen where they do not fit)', () => {
    const bad = (patch: Partial<RunConfig['train']>) => {
      const c = pairsConfig();
      c.train = { ...c.train, ...patch };
      return errorsOf(c);
    };
    expect(bad({ shortSeqPairs: 9 })).toEqual([
      'train.shortSeqPairs: must not exceed data.recall.pairs 8 (got 9): the warm-up is the easier task',
    ]);
    expect(bad({ shortSeqPairs: -1 })).toEqual(['train.shortSeqPairs: must be an integer ≥ 0 (got -1)']);
    expect(bad({ shortSeqSteps: 0 })).toEqual([
      "train.shortSeqPairs: sets the warm-up's pairs: it needs train.shortSeqSteps > 0 (got 0); 0 or absent",
    ]);
    // 8 pairs at 48 tokens: the recall task's own reason, under train.shortSeqLen.
    expect(bad({ shortSeqPairs: 8 })).toEqual([expect.stringMatching(/^train\.shortSeqLen: 48 does not fit: data\.recall\./)]);
    const text = warmConfig();
    text.train.shortSeqPairs = 2;
    expect(errorsOf(text)).toEqual(["train.shortSeqPairs: only a recall task has pairs (data.source is 'passkey'); 0 or absent"]);
    // --set reaches it; 0 is the panel's "the task's own".
    const c = mqarPresetConfig('mqar-tiny');
    applySet(c, 'train.shortSeqSteps', '2');
    applySet(c, 'train.shortSeqLen', '48');
    applySet(c, 'train.shortSeqPairs', '3');
    expect(c.train.shortSeqPairs).toBe(3);
    expect(validateRunConfig(c)).toEqual([]);
    expect(bad({ shortSeqPairs: 0, shortSeqLen: 60 })).toEqual([]);
  });
});

describe('sequence-length warm-up: config', () => {
  it('a valid warm-up passes; --set reaches both fields on a preset that lacks them', () => {
    expect(validateRunConfig(warmConfig())).toEqual([]);
    const c = preset('tiny');
    applySet(c, 'train.shortSeqSteps', '5');
    applySet(c, 'train.shortSeqLen', '32');
    expect([c.train.shortSeqSteps, c.train.shortSeqLen]).toEqual([5, 32]);
    expect(validateRunConfig(c)).toEqual([]);
  });

  it('refuses a warm-up that cannot run, naming the field', () => {
    const bad = (patch: Partial<RunConfig['train']>) => {
      const c = warmConfig();
      c.train = { ...c.train, ...patch };
      return errorsOf(c);
    };
    expect(bad({ shortSeqSteps: 11 })).toEqual(['train.shortSeqSteps: must not exceed steps (11 > 10)']);
    expect(bad({ shortSeqSteps: -1 })).toEqual(['train.shortSeqSteps: must be an integer ≥ 0 (got -1)']);
    expect(bad({ shortSeqSteps: 2.5 })).toEqual(['train.shortSeqSteps: must be an integer ≥ 0 (got 2.5)']);
    expect(bad({ shortSeqLen: -1 })).toEqual(['train.shortSeqLen: must be an integer ≥ 0 (got -1)']);
    expect(bad({ shortSeqLen: T })).toEqual([`train.shortSeqLen: must be below model.seqLen ${T} (got ${T})`]);
    for (const shortSeqLen of [undefined, 0])
      expect(bad({ shortSeqLen })).toEqual([
        "train.shortSeqLen: is required (≥ 1) when train.shortSeqSteps is 3 (the warm-up's sequence length)",
      ]);
    // 0 is the panel's "none" (the field's value when absent): valid without warm-up steps.
    expect(bad({ shortSeqSteps: 0, shortSeqLen: 0 })).toEqual([]);
    // Too short for the passkey task (2k + 1 = 9 tokens at least).
    expect(bad({ shortSeqLen: 8 })[0]).toMatch(/^train\.shortSeqLen: 8 does not fit: data\.passkey\.keyLength /);
    // Too short for the MQAR layout: the recall task's own reason, under train.shortSeqLen.
    const mqar = mqarPresetConfig('mqar-tiny');
    mqar.train = { ...mqar.train, shortSeqSteps: 10, shortSeqLen: 48 };
    expect(errorsOf(mqar)).toEqual([
      expect.stringMatching(/^train\.shortSeqLen: 48 does not fit: data\.recall\.minDistance .*seqLen ≥ 59/),
    ]);
  });
});
