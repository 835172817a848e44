// npm run learn's 'dsa' mechanism (src/train/learn/grid.ts): sized from the preset's NSA settings —
// top-k = nSel·lSel + w (NSA's selected positions and window; capped at T), a 2-head indexer of
// width dk/2 (even), a dense warm-up of 5 % of the steps, λ = 1 — and valid; --budget sets its top-k
// to the budget's rows (keys read at T − 1 = R). Both engines train it (the torch engine's losses
// against the WebGPU engine's: tests/cli/learn.integration.test.ts).
import { describe, expect, it } from 'vitest';

import { lastQueryKeys } from '../../src/definitions/keys-read';
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
});
