// The time-per-step estimate shown before Run and the question asked before a run whose steps
// would take minutes (src/ui/run/step-estimate.ts).
import { describe, expect, it } from 'vitest';

import { countParams } from '../../src/definitions/params';
import { preset } from '../../src/train/presets/presets';
import type { StepMetrics } from '../../src/train/types';
import { CALIBRATION_STEPS, calibrationStepMs, measuredRate } from '../../src/ui/run/calibration';
import {
  CONFIRM_STEP_SECONDS,
  estimatedStepSeconds,
  formatDuration,
  slowRunQuestion,
  stepSecondsFor,
} from '../../src/ui/run/step-estimate';

describe('time per step before Run', () => {
  it('is 6 FLOPs per parameter and token at 1 GFLOP/s (software) or 100 GFLOP/s (GPU)', () => {
    const c = preset('m7c-125m');
    const tokens = c.train.batchSize * c.train.gradAccum * c.model.seqLen;
    expect(estimatedStepSeconds(c, true)).toBeCloseTo((6 * countParams(c.model) * tokens) / 1e9, 6);
    expect(estimatedStepSeconds(c, false)).toBeCloseTo((6 * countParams(c.model) * tokens) / 1e11, 6);
  });

  it('asks before m7c-125m on a software adapter, not before tiny or small, nor m7c-125m on a GPU', () => {
    const q = slowRunQuestion(preset('m7c-125m'), true);
    expect(q).toMatch(/estimated at ≈ \d+ min on this software \(CPU\) adapter .*Start anyway\?/);
    expect(slowRunQuestion(preset('tiny'), true)).toBeNull();
    expect(estimatedStepSeconds(preset('small'), true)).toBeLessThan(CONFIRM_STEP_SECONDS);
    expect(slowRunQuestion(preset('small'), true)).toBeNull();
    expect(slowRunQuestion(preset('m7c-125m'), false)).toBeNull();
  });

  it('gives no estimate for a config it cannot count, and formats durations', () => {
    const bad = preset('tiny');
    bad.train.batchSize = Number.NaN;
    expect(estimatedStepSeconds(bad, true)).toBeNull();
    expect(formatDuration(0.0123)).toBe('≈ 12 ms');
    expect(formatDuration(42)).toBe('≈ 42 s');
    expect(formatDuration(0.14)).toBe('≈ 140 ms');
    expect(formatDuration(0.0042)).toBe('≈ 4.2 ms');
    expect(formatDuration(99.6)).toBe('≈ 100 s');
    expect(formatDuration(3)).toBe('≈ 3 s');
    expect(formatDuration(780)).toBe('≈ 13 min');
    expect(formatDuration(9000)).toBe('≈ 2.5 h');
  });
});

describe('calibrated by the first steps', () => {
  const step = (stepMs: number, i: number) => ({ step: i, stepMs }) as unknown as StepMetrics;

  it('takes the median ms of the steps after the first, and times a model at that FLOP rate', () => {
    const metrics = [900, 100, 300, 200].map(step); // the first (warm-up) is skipped: median of 100, 300, 200
    expect(calibrationStepMs(metrics)).toBe(200);
    expect(calibrationStepMs(metrics.slice(0, 1))).toBeNull();
    const r = measuredRate(metrics, 1e5, 512)!;
    expect(r.flopsPerSecond).toBeCloseTo((6 * 1e5 * 512) / 0.2, 6);
    expect(r.steps).toBe(3);
    // The same model at the measured rate takes the measured time; a model twice the size twice as long.
    expect(stepSecondsFor(1e5, 512, true, r.flopsPerSecond)).toBeCloseTo(0.2, 9);
    expect(stepSecondsFor(2e5, 512, true, r.flopsPerSecond)).toBeCloseTo(0.4, 9);
    const c = preset('m7c-125m');
    expect(slowRunQuestion(c, false, 1e6)).toMatch(/Start anyway\?/); // a slow measured GPU asks too
  });

  it('reads at most the first CALIBRATION_STEPS steps after the first', () => {
    const metrics = [1, ...Array<number>(CALIBRATION_STEPS).fill(10), ...Array<number>(50).fill(1000)].map(step);
    expect(calibrationStepMs(metrics)).toBe(10);
  });
});
