// The accuracy charts' band around chance: binomial chance ± 2·sqrt(p(1 − p)/n) with n the answers
// one evaluation scores.
import { describe, expect, it } from 'vitest';

import { chanceBand, scoredAnswers, taskChanceBand } from '../../src/ui/charts/chance-band';
import { uiPreset } from '../../src/ui/config/presets';

describe('chance band', () => {
  it('is chance ± 2σ of a binomial share, clipped to [0, 1]', () => {
    const b = chanceBand(0.25, 100)!;
    expect(b.sigma).toBeCloseTo(Math.sqrt((0.25 * 0.75) / 100), 12);
    expect(b.low).toBeCloseTo(0.25 - 2 * b.sigma, 12);
    expect(b.high).toBeCloseTo(0.25 + 2 * b.sigma, 12);
    expect(chanceBand(0.5, 1)).toMatchObject({ low: 0, high: 1 });
    expect(chanceBand(0.5, 0)).toBeNull();
  });

  it('recall preset: 8 answers × batch 4 × 16 batches = 512 scored; 8.3 % lies inside 6.25 % ± 2σ', () => {
    const c = uiPreset('recall');
    expect(scoredAnswers(c)).toBe(512);
    const b = taskChanceBand(c)!;
    expect(b.chance).toBe(1 / 16);
    expect(b.low).toBeLessThan(0.083);
    expect(b.high).toBeGreaterThan(0.083);
    expect(b.high).toBeCloseTo(0.0625 + 2 * Math.sqrt((0.0625 * 0.9375) / 512), 12);
  });

  it('passkey scores its digits; text data has no band', () => {
    const p = uiPreset('passkey');
    expect(scoredAnswers(p)).toBe(p.data.passkey!.keyLength * p.train.batchSize * p.train.evalBatches);
    expect(taskChanceBand(uiPreset('tiny'))).toBeNull();
  });
});
