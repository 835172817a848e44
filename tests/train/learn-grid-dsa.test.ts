// npm run learn's 'dsa' mechanism (src/train/learn/grid.ts): sized from the preset's NSA settings —
// top-k = nSel·lSel + w (NSA's selected positions and window; capped at T), a 2-head indexer of
// width dk/2 (even), a dense warm-up of 5 % of the steps, λ = 1 — and valid; --budget sets its top-k
// to the budget's rows (keys read at T − 1 = R); the torch engine refuses it before any process starts.
import { describe, expect, it } from 'vitest';

import { runTorch } from '../../src/cli/learn-torch';
import { lastQueryKeys } from '../../src/definitions/keys-read';
import { createDataset } from '../../src/train/data/datasets';
import { gridPoints, type LearnGrid } from '../../src/train/learn/grid';

const GRID: LearnGrid = { preset: 'mqar-tiny', mechanisms: ['dsa'], seeds: [1], target: 0.99 };

describe("npm run learn: 'dsa'", () => {
  it('sized from the preset’s NSA settings, valid', () => {
    const [p] = gridPoints({ ...GRID, steps: 200 });
    const m = p.config.model;
    const nsa = gridPoints({ ...GRID, mechanisms: ['nsa'] })[0].config.model.nsa!;
    expect(m.attention).toBe('dsa');
    expect(m.dsa).toEqual({
      indexHeads: 2,
      indexDim: Math.max(2, 2 * Math.floor(m.dk / 4)),
      topK: Math.min(nsa.nSel * nsa.lSel + nsa.w, m.seqLen),
      warmupSteps: 10,
      lossWeight: 1,
    });
    expect(m.dsa!.topK).toBeLessThan(m.seqLen);
    expect(m.dsa!.indexDim % 2).toBe(0);
    expect(m.dsa!.indexDim).toBeLessThanOrEqual(m.dk);
  });
  it('--budget R: top-k = R, keys read at T − 1 = R', () => {
    const [p] = gridPoints({ ...GRID, budget: 9 });
    expect(p.config.model.dsa!.topK).toBe(9);
    expect(lastQueryKeys(p.config.model.seqLen, p.config.model)).toBe(9);
  });
  it('the torch engine refuses it before any process starts', async () => {
    const [p] = gridPoints(GRID);
    const ds = createDataset(
      { kind: 'random', vocabSize: p.config.model.vocabSize },
      { batchSize: 1, seqLen: p.config.model.seqLen, seed: 1 },
    );
    const run = runTorch(p.config, ds, { python: '/nonexistent/python', evalBatches: 1, evalEvery: 1, target: 0.5, onLine: () => {} });
    await expect(run).rejects.toThrow(/--engine torch: the PyTorch model has no 'dsa' attention/);
  });
});
