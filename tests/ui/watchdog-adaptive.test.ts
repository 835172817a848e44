// The page watchdog's adaptive timeout (src/ui/heartbeat/watchdog.ts): the user's value is a floor,
// measured steps (or, before the first, an estimate) raise it, an evaluation gets its batches'
// worth, and a normal step never trips it.
import { describe, expect, it } from 'vitest';

import type { Heartbeat } from '../../src/train/types';
import {
  adaptiveTimeoutSeconds,
  checkStall,
  DEFAULT_WATCHDOG_SECONDS,
  estimateStepMs,
  stallAdvice,
  STEP_FACTOR,
  type StepTiming,
} from '../../src/ui/heartbeat/watchdog';

const beat = (ts: number, phase: Heartbeat['phase'] = 'step', step = 1): Heartbeat => ({
  ts,
  iso: '',
  step,
  msg: '',
  phase,
  loss: null,
  toks_per_s: null,
  lr: null,
  grad_norm: null,
  gpu_mem_bytes: 0,
});

const timing = (slowestStepMs: number | null, estimatedStepMs: number | null = null, evalStepRatio = 1): StepTiming => ({
  slowestStepMs,
  estimatedStepMs,
  evalStepRatio,
});

describe('adaptive watchdog timeout', () => {
  it('never goes below the user floor; fast steps keep the floor', () => {
    expect(adaptiveTimeoutSeconds(60, 'step', timing(200))).toBe(60);
    expect(adaptiveTimeoutSeconds(3, 'step', timing(200))).toBe(3);
    expect(adaptiveTimeoutSeconds(60, 'step', undefined)).toBe(60);
    expect(adaptiveTimeoutSeconds(60, 'step', timing(null, null))).toBe(60);
  });

  it('follows the slowest measured step, and before any the estimate', () => {
    expect(adaptiveTimeoutSeconds(60, 'step', timing(70_000))).toBe(STEP_FACTOR * 70);
    expect(adaptiveTimeoutSeconds(60, 'starting', timing(null, 100_000))).toBe(STEP_FACTOR * 100);
    expect(adaptiveTimeoutSeconds(60, 'step', timing(30_000, 100_000))).toBe(90); // measured beats the estimate
  });

  it('gives an evaluation as many steps as its batches per micro-batch', () => {
    expect(adaptiveTimeoutSeconds(60, 'eval', timing(70_000, null, 8))).toBe(STEP_FACTOR * 70 * 8);
    expect(adaptiveTimeoutSeconds(60, 'eval', timing(70_000, null, 0.5))).toBe(STEP_FACTOR * 70);
  });

  it('the small preset at ≈ 70 s a step on a CPU adapter does not trip the default on a normal (even 2× slower) step', () => {
    const t = timing(70_000);
    const w = { active: true, since: 0, timeoutSeconds: DEFAULT_WATCHDOG_SECONDS, timing: t };
    expect(checkStall({ ...w, now: 1_000_000 + 140_000, heartbeat: beat(1_000_000) })).toBeNull();
    const stall = checkStall({ ...w, now: 1_000_000 + 211_000, heartbeat: beat(1_000_000, 'step', 7) });
    expect(stall).toMatchObject({ timeoutSeconds: 210, phase: 'step', step: 7 });
  });

  it('the first step of the small preset on a software adapter is covered by the estimate', () => {
    // small: ≈ 3.4 M parameters, 4096 tokens a step → ≈ 84 s at the assumed 1 GFLOP/s; measured ≈ 70 s.
    const est = estimateStepMs(3.4e6, 4096, true);
    expect(est / 1000).toBeGreaterThan(70);
    const w = { active: true, since: 0, timeoutSeconds: DEFAULT_WATCHDOG_SECONDS, timing: timing(null, est), heartbeat: null };
    expect(checkStall({ ...w, now: 140_000 })).toBeNull();
    expect(estimateStepMs(3.4e6, 4096, false)).toBeLessThan(est / 50);
  });

  it('the advice names the phase and the field to raise', () => {
    const text = stallAdvice({ ageSeconds: 212, timeoutSeconds: 210, phase: 'eval', step: 3 });
    expect(text).toMatch(/evaluation/);
    expect(text).toMatch(/raise "Watchdog timeout" in the Heartbeat panel \(to 430 s or more\)/);
    expect(text).toMatch(/continues from its last autosave/);
  });
});
