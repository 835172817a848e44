// The worker's GPU-side timeout (src/worker/gpu-hang.ts), on fake timers: the deadline follows the
// slowest step, a GPU that answers onSubmittedWorkDone re-arms it, one that does not is hung.
import { describe, expect, it } from 'vitest';

import {
  FIRST_STEP_DEADLINE_MS,
  GpuHangError,
  STEP_DEADLINE_FACTOR,
  STEP_DEADLINE_FLOOR_MS,
  stepDeadlineMs,
  type Timers,
  watchForHang,
} from '../../src/worker/gpu-hang';

/** Timers fired by hand: fire() runs every pending callback (the deadline passed). */
class ManualTimers implements Timers {
  private pending = new Map<number, () => void>();
  private next = 0;
  readonly delays: number[] = [];
  set(cb: () => void, ms: number): unknown {
    this.delays.push(ms);
    this.pending.set(++this.next, cb);
    return this.next;
  }
  clear(h: unknown): void {
    this.pending.delete(h as number);
  }
  fire(): void {
    const cbs = [...this.pending.values()];
    this.pending.clear();
    for (const cb of cbs) cb();
  }
  get count(): number {
    return this.pending.size;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('stepDeadlineMs', () => {
  it('gives the first step a long allowance, later ones the slowest step × factor, never below the floor', () => {
    expect(stepDeadlineMs(null)).toBe(FIRST_STEP_DEADLINE_MS);
    expect(stepDeadlineMs(5)).toBe(STEP_DEADLINE_FLOOR_MS);
    expect(stepDeadlineMs(70_000)).toBe(STEP_DEADLINE_FACTOR * 70_000); // the small preset on a CPU adapter: 700 s
  });
});

describe('watchForHang', () => {
  it('passes a result through and leaves no timer behind', async () => {
    const timers = new ManualTimers();
    await expect(watchForHang(Promise.resolve(7), 1000, () => new Promise(() => {}), timers)).resolves.toBe(7);
    expect(timers.count).toBe(0);
  });

  it('a step past its deadline with a GPU that answers is slow, not hung: it is waited for', async () => {
    const timers = new ManualTimers();
    let finish: (v: string) => void = () => {};
    const work = new Promise<string>((r) => (finish = r));
    let probes = 0;
    const p = watchForHang(work, 1000, async () => void probes++, timers);
    await tick();
    timers.fire(); // deadline: the GPU is asked, and answers
    await tick();
    await tick();
    timers.fire(); // another deadline
    await tick();
    finish('slow step');
    await expect(p).resolves.toBe('slow step');
    expect(probes).toBe(2);
  });

  it('a step past its deadline with a GPU that never answers onSubmittedWorkDone is GpuHangError', async () => {
    const timers = new ManualTimers();
    const p = watchForHang(new Promise(() => {}), 60_000, () => new Promise<void>(() => {}), timers);
    const caught = p.catch((e: unknown) => e);
    await tick();
    timers.fire(); // the step's deadline
    await tick();
    timers.fire(); // the GPU's deadline
    const e = await caught;
    expect(e).toBeInstanceOf(GpuHangError);
    expect((e as GpuHangError).waitedMs).toBe(120_000);
    expect((e as Error).message).toMatch(/within 120 s \(queue.onSubmittedWorkDone never answered\)/);
    expect(timers.delays).toEqual([60_000, 60_000]);
  });

  it('a failing step rejects as it is', async () => {
    await expect(watchForHang(Promise.reject(new Error('boom')), 1000, async () => {}, new ManualTimers())).rejects.toThrow('boom');
  });
});
