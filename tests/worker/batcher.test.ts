// UpdateBatcher: at most one update per interval, nothing lost, nothing repeated, order kept.
import { describe, expect, it } from 'vitest';

import type { Heartbeat, StepMetrics } from '../../src/train/types';
import { UpdateBatcher } from '../../src/worker/batcher';
import type { TrainUpdate } from '../../src/worker/protocol';

function metrics(step: number): StepMetrics {
  return { step, loss: 5 - step * 0.01, lr: 1e-3, gradNorm: 1, tokensPerSecond: 1000, stepMs: 1, elapsedMs: step };
}

function heartbeat(step: number): Heartbeat {
  return {
    ts: step,
    iso: '',
    step,
    msg: `step ${step}`,
    phase: 'step',
    loss: null,
    toks_per_s: null,
    lr: null,
    grad_norm: null,
    gpu_mem_bytes: 0,
  };
}

/** A fake clock; sleep advances it; timers run when the clock passes them (fire()). */
function harness(intervalMs = 100) {
  let t = 0;
  const sent: { at: number; u: TrainUpdate }[] = [];
  const slept: number[] = [];
  let timers: { at: number; fn: () => void }[] = [];
  const b = new UpdateBatcher(
    (u) => sent.push({ at: t, u }),
    intervalMs,
    () => t,
    async (ms) => {
      slept.push(ms);
      t += ms;
    },
    (fn, ms) => {
      const timer = { at: t + ms, fn };
      timers.push(timer);
      return () => (timers = timers.filter((x) => x !== timer));
    },
  );
  /** Advances the clock to the next timer and runs it. */
  const fire = () => {
    const next = timers.sort((a, c) => a.at - c.at).shift();
    if (!next) return false;
    t = Math.max(t, next.at);
    next.fn();
    return true;
  };
  return { b, sent, slept, advance: (ms: number) => (t += ms), fire, timers: () => timers.length };
}

describe('UpdateBatcher', () => {
  it('sends the first item at once and coalesces the rest of the interval', () => {
    const { b, sent, advance } = harness();
    b.addMetrics(metrics(0));
    expect(sent.map((s) => s.u.metrics.map((m) => m.step))).toEqual([[0]]);
    advance(30);
    b.addMetrics(metrics(1));
    advance(30);
    b.addMetrics(metrics(2));
    expect(sent).toHaveLength(1);
    advance(40); // 100 ms after the first send
    b.addMetrics(metrics(3));
    expect(sent.map((s) => s.u.metrics.map((m) => m.step))).toEqual([[0], [1, 2, 3]]);
  });

  it('close() waits out the interval, then sends what is pending; with nothing pending it sends nothing', async () => {
    const { b, sent, slept, advance } = harness();
    b.addMetrics(metrics(0));
    advance(25);
    b.addMetrics(metrics(1));
    await b.close();
    expect(slept).toEqual([75]);
    expect(sent.map((s) => [s.at, s.u.metrics.map((m) => m.step)])).toEqual([
      [0, [0]],
      [100, [1]],
    ]);
    await b.close();
    expect(sent).toHaveLength(2);
  });

  it('keeps only the latest heartbeat and sends heartbeats without metrics', async () => {
    const { b, sent, advance } = harness();
    b.setHeartbeat(heartbeat(0));
    advance(10);
    b.setHeartbeat(heartbeat(1));
    b.setHeartbeat(heartbeat(2));
    await b.close();
    expect(sent.map((s) => [s.u.heartbeat?.step, s.u.metrics.length])).toEqual([
      [0, 0],
      [2, 0],
    ]);
  });

  it('delivers 1000 fast steps exactly once, in order, at most 10 updates per second', async () => {
    const { b, sent, advance } = harness(100);
    for (let i = 0; i < 1000; i++) {
      b.addMetrics(metrics(i));
      advance(3); // 3 ms per step: 333 steps/s
    }
    await b.close();
    const steps = sent.flatMap((s) => s.u.metrics.map((m) => m.step));
    expect(steps).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    for (let i = 1; i < sent.length; i++) expect(sent[i].at - sent[i - 1].at).toBeGreaterThanOrEqual(100);
    // 3 s of steps at ≤ 10/s: 30 sends plus the first.
    expect(sent.length).toBeLessThanOrEqual(31);
    expect(sent.length).toBeGreaterThanOrEqual(29);
  });

  it('coalesces evaluations in order and sends only the latest snapshot list', async () => {
    const { b, sent, advance } = harness();
    b.addMetrics(metrics(0));
    advance(10);
    b.addEval({ step: 1, valLoss: 4 });
    b.setSnapshotSteps([0]);
    b.setSnapshotSteps([0, 1]);
    b.addEval({ step: 2, valLoss: 3.5 });
    await b.close();
    expect(sent.map((s) => [s.u.metrics.length, s.u.evals.map((e) => e.step), s.u.snapshotSteps])).toEqual([
      [1, [], null],
      [0, [1, 2], [0, 1]],
    ]);
  });

  it('what arrives within the interval goes out when it ends, with no further input (a long step)', () => {
    const { b, sent, advance, fire, timers } = harness();
    b.addMetrics(metrics(0));
    advance(20);
    b.addEval({ step: 1, valLoss: 4 });
    b.setHeartbeat(heartbeat(1));
    expect(sent).toHaveLength(1);
    expect(timers()).toBe(1); // one timer however many items are held
    expect(fire()).toBe(true);
    expect(sent.map((s) => [s.at, s.u.evals.length, s.u.heartbeat?.step])).toEqual([
      [0, 0, undefined],
      [100, 1, 1],
    ]);
    expect(timers()).toBe(0);
  });
});
