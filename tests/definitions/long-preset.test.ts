// The long-context preset: a valid run config, within the limits every WebGPU adapter has, on a
// recall task whose answers window-only attention cannot reach, reading a small share of the keys.
import { describe, expect, it } from 'vitest';

import { countParams } from '../../src/definitions/params';
import { validateRunConfig } from '../../src/train/config';
import { validateRecallTask } from '../../src/train/data/recall';
import { longPreset } from '../../src/train/presets/long-preset';
import { checkRunResources } from '../../src/train/resources';
import { nsaFacts } from '../../src/ui/config/derived';

describe('long preset', () => {
  const c = longPreset();
  const nsa = c.model.nsa!;

  it('is a valid NSA run at T = 4096 on the recall task, and fits any adapter', () => {
    expect(validateRunConfig(c)).toEqual([]);
    expect(validateRecallTask(c.data.recall!, c.model.seqLen)).toEqual([]);
    expect(c.model.seqLen).toBe(4096);
    expect(c.model.attention).toBe('nsa');
    expect(checkRunResources(c)).toEqual([]);
    expect(countParams(c.model)).toBeGreaterThan(3e6);
    expect(countParams(c.model)).toBeLessThan(6e6);
  });

  it('answers lie beyond window-only reach; the last query reads a quarter of the keys, a query 40% on average', () => {
    expect(c.data.recall!.minDistance).toBeGreaterThan(c.model.nLayers * (nsa.w - 1));
    const f = nsaFacts(c.model.seqLen, nsa);
    expect(f.last).toMatchObject({ cmp: 255, sel: 512, win: 256, total: 1023, dense: 4096 });
    expect(f.mean.total / f.mean.dense).toBeCloseTo(0.404, 3);
  });
});
