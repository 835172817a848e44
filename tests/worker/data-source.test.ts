// The worker's datasets: each data kind builds the dataset the config asks for, mismatches fail
// before any GPU work, and the page's description of it is finite and cloneable.
import { describe, expect, it } from 'vitest';

import { passkeyPreset } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';
import { buildDataset, dataMismatch, describeDataset } from '../../src/worker/data-source';

const TEXT = Array.from({ length: 30 }, (_, i) => `Document ${i}. ${'Some words to learn from. '.repeat(20)}`).join('\n\n');

describe('worker datasets', () => {
  it('brown fetches the corpus only for brown runs', async () => {
    const c = preset('tiny');
    let fetched = 0;
    const load = async () => {
      fetched++;
      return TEXT;
    };
    const d = await buildDataset(c, { kind: 'brown' }, load);
    expect(fetched).toBe(1);
    expect(d.name).toBe('brown');
    expect(describeDataset(d)).toMatchObject({ name: 'brown', vocabSize: 256, tokenizer: 'byte' });
    c.data.source = 'random';
    const r = await buildDataset(c, { kind: 'random' }, load);
    expect(fetched).toBe(1);
    const info = describeDataset(r);
    expect(info.trainTokens).toBeNull(); // unbounded, not Infinity: the page gets plain JSON
    expect(info.tokenizer).toBeNull();
  });

  it('upload trains on the given text under the upload source', async () => {
    const c = preset('tiny');
    c.data.source = 'upload';
    const d = await buildDataset(c, { kind: 'upload', name: 'mine.txt', text: TEXT }, async () => '');
    expect(d.name).toBe('mine.txt');
    expect(d.trainTokens).toBeGreaterThan(0);
    expect(dataMismatch(c, { kind: 'upload', name: 'e.txt', text: '' })).toMatch(/empty/);
  });

  it('recall builds the task in config.data.recall', async () => {
    const run = recallPreset();
    run.data.recall = { ...run.data.recall!, values: 20, pairs: 6, queries: 4 };
    run.model.vocabSize = 37;
    const d = await buildDataset(run, { kind: 'recall' }, async () => '');
    expect(d.vocabSize).toBe(1 + 16 + 20);
    expect(d.name).toBe('recall-k16-v20-f1-p6-q4-d15');
    const [batch] = d.validationBatches(1);
    expect(Math.max(...batch.tokens, ...batch.targets)).toBeLessThan(37);
    // The last target of every sequence is an answer: a value token.
    for (let b = 0; b < run.train.batchSize; b++) expect(batch.targets[(b + 1) * run.model.seqLen - 1]).toBeGreaterThanOrEqual(17);
  });

  it('recall needs the recall source and its task; other sources never train it', async () => {
    const run = recallPreset();
    expect(dataMismatch(run, { kind: 'random' })).toBe("the data is 'random' but config.data.source is 'recall'");
    const tiny = preset('tiny');
    expect(dataMismatch(tiny, { kind: 'recall' })).toBe("the data is 'recall' but config.data.source is 'brown'");
    tiny.data.source = 'recall';
    await expect(buildDataset(tiny, { kind: 'recall' }, async () => '')).rejects.toThrow('config.data.recall (the recall task) is missing');
  });

  it('passkey builds the task in config.data.passkey, and needs the passkey source and its task', async () => {
    const run = passkeyPreset();
    run.data.passkey = { ...run.data.passkey!, digits: 4, keyLength: 2 };
    const d = await buildDataset(run, { kind: 'passkey' }, async () => '');
    expect(d.vocabSize).toBe(8 + 2 + 4);
    expect(d.name).toBe('passkey-d4-k2-f8-depth0.15-0.8');
    const [batch] = d.validationBatches(1);
    const T = run.model.seqLen;
    // The last two targets of every sequence are the passkey digits; the query marker (9) precedes them.
    for (let b = 0; b < run.train.batchSize; b++) {
      expect(batch.tokens[(b + 1) * T - 2]).toBe(9);
      for (const n of [(b + 1) * T - 2, (b + 1) * T - 1]) expect(batch.targets[n]).toBeGreaterThanOrEqual(10);
    }
    expect(dataMismatch(run, { kind: 'recall' })).toBe("the data is 'recall' but config.data.source is 'passkey'");
    const tiny = preset('tiny');
    expect(dataMismatch(tiny, { kind: 'passkey' })).toBe("the data is 'passkey' but config.data.source is 'brown'");
    tiny.data.source = 'passkey';
    await expect(buildDataset(tiny, { kind: 'passkey' }, async () => '')).rejects.toThrow(
      'config.data.passkey (the passkey task) is missing',
    );
  });

  it('a data kind that does not match config.data.source fails, naming both', async () => {
    const c = preset('tiny'); // source brown
    await expect(buildDataset(c, { kind: 'copy' }, async () => TEXT)).rejects.toThrow(
      "the data is 'copy' but config.data.source is 'brown'",
    );
  });
});
