// The worker's datasets: each data kind builds the dataset the config asks for, mismatches fail
// before any GPU work, and the page's description of it is finite and cloneable.
import { describe, expect, it } from 'vitest';
import { preset } from '../../src/model/presets';
import { recallPreset } from '../../src/model/recall-preset';
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

  it('recall builds the recall task whatever the placeholder source', async () => {
    const { run, task } = recallPreset();
    const d = await buildDataset(run, { kind: 'recall', task }, async () => '');
    expect(d.vocabSize).toBe(task.fillers + task.keys + task.values);
    expect(d.name).toMatch(/^recall-/);
  });

  it('a data kind that does not match config.data.source fails, naming both', async () => {
    const c = preset('tiny'); // source brown
    await expect(buildDataset(c, { kind: 'copy' }, async () => TEXT)).rejects.toThrow("the data is 'copy' but config.data.source is 'brown'");
  });
});
