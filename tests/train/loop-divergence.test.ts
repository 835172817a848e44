// The training loop's divergence guard (src/train/divergence.ts) on its own: it stops a run whose
// loss stays above factor × ln V for N consecutive steps, never one that dips below in between,
// can be turned off, continues a resumed run's streak, and its config fields are validated by name.
import { describe, expect, it } from 'vitest';

import { validateTrainConfig } from '../../src/train/config';
import { DIVERGENCE_DEFAULTS, DivergenceError, DivergenceGuard, divergenceSettings } from '../../src/train/divergence';
import { preset } from '../../src/train/presets/presets';

const V = 256;
const LIMIT = 3 * Math.log(V); // 16.64

/** The step at which the guard throws on these losses (steps 0, 1, …), or null. */
function tripsAt(losses: number[], factor = 3, steps = 5): DivergenceError | null {
  const g = new DivergenceGuard({ factor, steps, vocabSize: V });
  try {
    losses.forEach((loss, step) => g.observe(step, loss));
    return null;
  } catch (e) {
    if (e instanceof DivergenceError) return e;
    throw e;
  }
}

describe('divergence guard', () => {
  it('stops at the N-th consecutive step above factor × ln V, naming the step, loss, limit and fields', () => {
    // The tiny preset at --lr 10 --set train.lrMin=10 (measured): 5.59, 8.48, 47.7, 81.2, 112, 217, …
    const e = tripsAt([5.59, 8.48, 47.7, 81.2, 111.6, 216.8, 277.7, 318.1]);
    expect(e).toBeInstanceOf(DivergenceError);
    expect([e!.step, e!.firstStep, e!.loss]).toEqual([6, 2, 277.7]);
    expect(e!.limit).toBeCloseTo(LIMIT, 10);
    expect(e!.message).toMatch(
      /^step 6: loss 277\.7000 has been above 16\.6355 \(train\.divergenceFactor 3 × ln 256\) for 5 consecutive steps, since step 2/,
    );
    expect(e!.message).toMatch(/train\.lrMax.*train\.gradClip.*train\.divergenceFactor = 0/);
  });

  it('a normal run never trips: losses near or below ln V, spikes shorter than N, values at the limit', () => {
    expect(tripsAt(Array.from({ length: 300 }, (_, s) => 5.55 - s / 100))).toBeNull();
    const spiky = [5.5, 20, 30, 40, 50, 5, 20, 30, 40, 50, 4.9, LIMIT, LIMIT, LIMIT, LIMIT, LIMIT, LIMIT];
    expect(tripsAt(spiky)).toBeNull();
  });

  it('NaN is not counted as above (non-finite losses stop the run through NonFiniteError first)', () => {
    expect(tripsAt([50, 50, 50, 50, NaN, 50, 50, 50, 50])).toBeNull();
  });

  it('factor 0 turns it off; steps and factor are the config fields, else the defaults', () => {
    expect(tripsAt(Array(20).fill(1e4), 0)).toBeNull();
    expect(tripsAt([1e4], 3, 1)?.step).toBe(0);
    expect(tripsAt([10, 10, 10], 1.5, 3)?.step).toBe(2); // 10 > 1.5 · ln 256 = 8.3
    const t = preset('tiny').train;
    expect(divergenceSettings(t, V)).toEqual({ factor: DIVERGENCE_DEFAULTS.factor, steps: DIVERGENCE_DEFAULTS.steps, vocabSize: V });
    expect(divergenceSettings({ ...t, divergenceFactor: 10, divergenceSteps: 2 }, 50257)).toEqual({
      factor: 10,
      steps: 2,
      vocabSize: 50257,
    });
  });

  it('a resumed run continues the streak of its checkpoint metrics: it stops where the uninterrupted run would', () => {
    const losses = [5, 30, 30, 30, 30, 30];
    expect(tripsAt(losses)?.step).toBe(5);
    const resumed = new DivergenceGuard({ factor: 3, steps: 5, vocabSize: V });
    resumed.replay(losses.slice(0, 3).map((loss, step) => ({ step, loss })));
    resumed.observe(3, 30);
    resumed.observe(4, 30);
    expect(() => resumed.observe(5, 30)).toThrow(/^step 5: .* since step 1/);
  });

  it('validates train.divergenceFactor and train.divergenceSteps by name; both optional', () => {
    const t = preset('tiny').train;
    expect(validateTrainConfig(t)).toEqual([]);
    expect(validateTrainConfig({ ...t, divergenceFactor: 0, divergenceSteps: 1 })).toEqual([]);
    expect(validateTrainConfig({ ...t, divergenceFactor: 4.5, divergenceSteps: 20 })).toEqual([]);
    for (const bad of [1, 0.5, -2, NaN, Infinity, 2e6]) {
      expect(
        validateTrainConfig({ ...t, divergenceFactor: bad }).map((i) => i.field),
        String(bad),
      ).toEqual(['train.divergenceFactor']);
    }
    for (const bad of [0, 2.5, -1, NaN]) {
      expect(
        validateTrainConfig({ ...t, divergenceSteps: bad }).map((i) => i.field),
        String(bad),
      ).toEqual(['train.divergenceSteps']);
    }
  });
});
