import { describe, expect, it } from 'vitest';

import { learningRate, type LrSchedule, validateLrSchedule } from '../../src/train/lr-schedule';

const s: LrSchedule = { lrMax: 1e-3, lrMin: 1e-4, warmupSteps: 10, totalSteps: 100, warmupStartFraction: 0.1 };
const lr = (step: number, sched: LrSchedule = s) => learningRate(sched, step);

describe('learningRate', () => {
  it('starts above 0 at lrMax*warmupStartFraction and rises linearly to lrMax at warmupSteps', () => {
    expect(lr(0)).toBeCloseTo(1e-4, 15);
    expect(lr(0)).toBeGreaterThan(0);
    expect(lr(5)).toBeCloseTo(1e-3 * (0.1 + 0.9 * 0.5), 15);
    expect(lr(10)).toBe(1e-3);
    for (let t = 1; t <= 10; t++) expect(lr(t)).toBeGreaterThan(lr(t - 1));
    // linear: equal increments
    for (let t = 1; t < 10; t++) expect(lr(t + 1) - lr(t)).toBeCloseTo(lr(1) - lr(0), 15);
  });

  it('decays by a cosine from lrMax to lrMin at totalSteps, strictly monotone, constant after', () => {
    for (let t = 11; t <= 100; t++) expect(lr(t)).toBeLessThan(lr(t - 1));
    expect(lr(55)).toBeCloseTo((1e-3 + 1e-4) / 2, 15); // halfway through the decay
    expect(lr(10 + 90 / 4)).toBeCloseTo(1e-4 + 0.9e-3 * 0.5 * (1 + Math.SQRT1_2), 15);
    expect(lr(100)).toBe(1e-4);
    expect(lr(101)).toBe(1e-4);
    expect(lr(10_000)).toBe(1e-4);
  });

  it('with no warmup starts at lrMax; with lrMin = lrMax is constant', () => {
    const noWarmup = { ...s, warmupSteps: 0 };
    expect(lr(0, noWarmup)).toBe(1e-3);
    expect(lr(1, noWarmup)).toBeLessThan(1e-3);
    const flat = { ...s, lrMin: 1e-3 };
    for (const t of [10, 37, 100, 500]) expect(lr(t, flat)).toBeCloseTo(1e-3, 15);
  });
});

describe('validateLrSchedule', () => {
  it('accepts a valid schedule', () => {
    expect(validateLrSchedule(s)).toEqual([]);
    expect(validateLrSchedule({ ...s, warmupSteps: 0, lrMin: 0, warmupStartFraction: 1 })).toEqual([]);
  });

  const cases: [string, Partial<LrSchedule>, string][] = [
    ['lrMax 0', { lrMax: 0 }, 'lrMax'],
    ['lrMax NaN', { lrMax: Number.NaN }, 'lrMax'],
    ['lrMin negative', { lrMin: -1e-5 }, 'lrMin'],
    ['lrMin above lrMax', { lrMin: 2e-3 }, 'lrMin'],
    ['warmupSteps fractional', { warmupSteps: 2.5 }, 'warmupSteps'],
    ['warmupSteps negative', { warmupSteps: -1 }, 'warmupSteps'],
    ['totalSteps 0', { totalSteps: 0 }, 'totalSteps'],
    ['totalSteps infinite', { totalSteps: Number.POSITIVE_INFINITY }, 'totalSteps'],
    ['warmup not below total', { warmupSteps: 100 }, 'warmupSteps'],
    ['warmupStartFraction 0', { warmupStartFraction: 0 }, 'warmupStartFraction'],
    ['warmupStartFraction above 1', { warmupStartFraction: 1.5 }, 'warmupStartFraction'],
  ];
  for (const [label, patch, field] of cases) {
    it(`rejects ${label}, naming ${field}`, () => {
      const errors = validateLrSchedule({ ...s, ...patch });
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.some((m) => m.includes(field))).toBe(true);
    });
  }
});
