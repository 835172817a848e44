// TrainingSession: the worker's run loop, driven by a fake trainer with the real Trainer's
// contract (metrics one step late, each returned once; a non-finite step throws NonFiniteError
// when its metrics resolve, as src/train/trainer.ts does).
import { describe, expect, it } from 'vitest';

import type { GpuReport } from '../../src/gpu/context';
import { NonFiniteError } from '../../src/train/trainer';
import type { StepMetrics } from '../../src/train/types';
import type { TrainUpdate } from '../../src/worker/protocol';
import { type Checkpoints, GpuFailureError, type GpuReporter, type SessionTrainer, TrainingSession } from '../../src/worker/session';

class FakeTrainer implements SessionTrainer {
  stepsDone = 0;
  destroyed = 0;
  /** Called before each step resolves; may pause/stop the session or hang the step. */
  beforeStep: (step: number) => void | Promise<void> = () => {};
  private pending: number | null = null;

  constructor(private readonly loss: (step: number) => number = (s) => 5 - 0.1 * s) {}

  private metrics(step: number): StepMetrics {
    const loss = this.loss(step);
    if (!Number.isFinite(loss)) throw new NonFiniteError(step, loss, 1);
    return { step, loss, lr: 1e-3, gradNorm: 1, tokensPerSecond: 512, stepMs: 1, elapsedMs: step };
  }

  async step(): Promise<StepMetrics[]> {
    await this.beforeStep(this.stepsDone);
    await new Promise((r) => setTimeout(r, 0)); // let other messages (pause, stop) run, as a real GPU wait does
    const prev = this.pending;
    this.pending = this.stepsDone++;
    return prev === null ? [] : [this.metrics(prev)];
  }

  async flush(): Promise<StepMetrics[]> {
    const p = this.pending;
    this.pending = null;
    return p === null ? [] : [this.metrics(p)];
  }

  destroy(): void {
    this.destroyed++;
  }
}

class FakeGpu implements GpuReporter {
  private listeners = new Set<(r: GpuReport) => void>();
  onReport(cb: (r: GpuReport) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }
  report(r: GpuReport): void {
    for (const cb of this.listeners) cb(r);
  }
  get subscribers(): number {
    return this.listeners.size;
  }
}

function setup(loss?: (step: number) => number, checkpoints?: Checkpoints, sleep: (ms: number) => Promise<void> = async () => {}) {
  const trainer = new FakeTrainer(loss);
  const gpu = new FakeGpu();
  let t = 0;
  // Fake clock: every update is allowed (the batcher has its own tests); close() never sleeps.
  const session = new TrainingSession(trainer, gpu, { now: () => (t += 1000), sleep, checkpoints });
  const updates: TrainUpdate[] = [];
  const emit = (u: TrainUpdate) => updates.push(u);
  const steps = () => updates.flatMap((u) => u.metrics.map((m) => m.step));
  return { trainer, gpu, session, emit, steps };
}

describe('TrainingSession', () => {
  it('runs N steps and reports each step once, in order, including the last (read back by flush)', async () => {
    const { trainer, session, emit, steps } = setup();
    const r = await session.train(5, emit);
    expect(r.end).toBe('done');
    expect(r.stepsDone).toBe(5);
    expect(r.last?.step).toBe(4);
    expect(steps()).toEqual([0, 1, 2, 3, 4]);
    expect(session.state).toBe('ready');
    expect(trainer.destroyed).toBe(0);
  });

  it('pauses between steps and resumes where it left off', async () => {
    const { trainer, session, emit, steps } = setup();
    trainer.beforeStep = (s) => {
      if (s === 3) session.pause();
    };
    const first = await session.train(8, emit);
    expect(first.end).toBe('paused');
    expect(first.stepsDone).toBe(4); // the step in flight when pause arrived completes
    trainer.beforeStep = () => {};
    const second = await session.train(8 - first.stepsDone, emit);
    expect(second.end).toBe('done');
    expect(second.stepsDone).toBe(8);
    expect(steps()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('stop ends the run, frees the trainer once, and refuses to train again', async () => {
    const { trainer, gpu, session, emit } = setup();
    // Not awaited in the hook: stop() resolves once the run it ends has let go of the trainer.
    let stopped: Promise<void> | undefined;
    trainer.beforeStep = (s) => {
      if (s === 2) stopped = session.stop();
    };
    const r = await session.train(10, emit);
    await expect(stopped).resolves.toBeUndefined();
    expect(r.end).toBe('stopped');
    expect(r.stepsDone).toBe(3);
    expect(trainer.destroyed).toBe(1);
    expect(gpu.subscribers).toBe(0);
    await session.stop();
    expect(trainer.destroyed).toBe(1);
    await expect(session.train(1, emit)).rejects.toThrow(/stopped/);
  });

  it('stop while idle frees the trainer at once', async () => {
    const { trainer, session } = setup();
    const stopped = session.stop();
    // Before stop() has resolved: with nothing running it frees synchronously.
    expect(trainer.destroyed).toBe(1);
    expect(session.state).toBe('closed');
    await stopped;
  });

  it('a non-finite loss fails the run with a readable message, after sending the good steps', async () => {
    const { trainer, session, emit, steps } = setup((s) => (s === 3 ? NaN : 5 - s));
    const err = await session.train(10, emit).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonFiniteError);
    expect((err as NonFiniteError).name).toBe('NonFiniteError');
    expect([(err as NonFiniteError).step, (err as NonFiniteError).loss]).toEqual([3, NaN]);
    expect((err as Error).message).toMatch(/step 3: loss NaN.*Lower the learning rate/);
    expect(steps()).toEqual([0, 1, 2]);
    expect(trainer.destroyed).toBe(1);
    await expect(session.train(1, emit)).rejects.toThrow(/step 3: loss NaN/);
  });

  it('a lost device fails the run even while a step never resolves', async () => {
    const { trainer, gpu, session, emit } = setup();
    trainer.beforeStep = (s) => {
      if (s === 2) {
        gpu.report({ kind: 'device-lost', message: 'GPU device lost (unknown): test' });
        return new Promise<void>(() => {}); // a readback that never completes
      }
    };
    const err = await session.train(10, emit).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuFailureError);
    expect((err as Error).message).toBe('GPU device lost (unknown): test');
    expect((err as Error).name).toBe('DeviceLostError'); // the page recovers from this one by name
    expect(trainer.destroyed).toBe(1);
  });

  it('a GPU call aborted by a lost device (rejected before the lost report) fails as DeviceLostError', async () => {
    const trainer = new FakeTrainer();
    let resolveLost: (r: GpuReport) => void = () => {};
    const lost = new Promise<GpuReport>((r) => (resolveLost = r));
    const session = new TrainingSession(trainer, Object.assign(new FakeGpu(), { lost }));
    trainer.beforeStep = (s) => {
      if (s !== 2) return;
      setTimeout(() => resolveLost({ kind: 'device-lost', message: 'GPU device lost (destroyed): test' }), 5);
      throw new DOMException('Buffer was unmapped before mapping was resolved.', 'AbortError');
    };
    const err = await session.train(5, () => {}).catch((e: unknown) => e);
    expect((err as Error).name).toBe('DeviceLostError');
    expect((err as Error).message).toBe('GPU device lost (destroyed): test');
  });

  it("test faults: 'lose-device' runs before step atStep, 'block' spins the thread's clock for its ms", async () => {
    const trainer = new FakeTrainer();
    const gpu = new FakeGpu();
    let t = 0;
    const lostAt: number[] = [];
    const session = new TrainingSession(trainer, gpu, { now: () => (t += 10), loseDevice: () => lostAt.push(trainer.stepsDone) });
    session.injectFault({ kind: 'lose-device', atStep: 2 });
    await session.train(4, () => {});
    expect(lostAt).toEqual([2]); // once, before step 2
    session.injectFault({ kind: 'block', atStep: 5, ms: 10_000 });
    const before = t;
    await session.train(2, () => {});
    expect(t - before).toBeGreaterThanOrEqual(10_000); // the clock was read until the block's end
    expect(() => session.injectFault({ kind: 'block', atStep: 1, ms: Infinity })).toThrow(RangeError);
    expect(() => session.injectFault({ kind: 'lose-device', atStep: -1 })).toThrow(RangeError);
  });

  it('a step the GPU never finishes (onSubmittedWorkDone silent past two deadlines) fails with GpuHangError', async () => {
    const trainer = new FakeTrainer();
    const fired: number[] = [];
    const gpu = Object.assign(new FakeGpu(), { workDone: () => new Promise<void>(() => {}) });
    // Timers that fire at once: every deadline passes immediately.
    const timers = {
      set: (cb: () => void, ms: number) => (fired.push(ms), setTimeout(cb, 0)),
      clear: (h: unknown) => clearTimeout(h as number),
    };
    const session = new TrainingSession(trainer, gpu, { timers });
    trainer.beforeStep = (s) => (s === 1 ? new Promise<void>(() => {}) : undefined);
    const err = await session.train(5, () => {}).catch((e: unknown) => e);
    expect((err as Error).name).toBe('GpuHangError');
    expect(trainer.destroyed).toBe(1);
    expect(fired.length).toBeGreaterThanOrEqual(2);
  });

  it('names GPU validation errors', async () => {
    const { trainer, gpu, session, emit } = setup();
    trainer.beforeStep = (s) => {
      if (s === 1) gpu.report({ kind: 'validation', message: 'bad binding' });
    };
    await expect(session.train(4, emit)).rejects.toThrow('GPU validation error: bad binding');
  });

  it('rejects bad step counts and a second concurrent train()', async () => {
    const { session, emit } = setup();
    await expect(session.train(0, emit)).rejects.toThrow(RangeError);
    await expect(session.train(1.5, emit)).rejects.toThrow(RangeError);
    const running = session.train(3, emit);
    await expect(session.train(1, emit)).rejects.toThrow(/already running/);
    expect((await running).end).toBe('done');
  });

  it('checkpoints when due, with the GPU flushed first, and passes evals and snapshot lists on in step order', async () => {
    const taken: Array<{ stepsDone: number; lastMetricStep: number | undefined }> = [];
    let seen: number[] = [];
    const cp: Checkpoints = {
      due: (n) => n % 3 === 0 || n === 7,
      take: async (n) => {
        taken.push({ stepsDone: n, lastMetricStep: seen.at(-1) });
        return n === 7 ? { eval: { step: n, valLoss: 1 } } : { snapshotSteps: [n - 1] };
      },
    };
    const { session, steps } = setup(undefined, cp);
    const updates: TrainUpdate[] = [];
    await session.train(7, (u) => {
      updates.push(u);
      seen = [...seen, ...u.metrics.map((m) => m.step)];
    });
    // Each checkpoint sees the metrics of every step before it (the flush delivered step n − 1).
    expect(taken).toEqual([
      { stepsDone: 3, lastMetricStep: 2 },
      { stepsDone: 6, lastMetricStep: 5 },
      { stepsDone: 7, lastMetricStep: 6 },
    ]);
    expect(updates.flatMap((u) => u.evals)).toEqual([{ step: 7, valLoss: 1 }]);
    expect(updates.filter((u) => u.snapshotSteps).map((u) => u.snapshotSteps)).toEqual([[2], [5]]);
    expect(updates.flatMap((u) => u.metrics.map((m) => m.step))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(steps()).toEqual([]); // the shared collector saw nothing: this run used its own
  });

  it('a test stall delays the next step without sending anything, and pause ends it early', async () => {
    const slept: number[] = [];
    const { trainer, session } = setup(undefined, undefined, async (ms) => {
      slept.push(ms);
      await new Promise((r) => setTimeout(r, 0)); // a real sleep lets messages (pause) in
    });
    session.stallNextStep(120);
    const updates: TrainUpdate[] = [];
    await session.train(2, (u) => updates.push(u));
    expect(slept.slice(0, 3)).toEqual([50, 50, 20]); // polled in 50 ms slices: pause and stop stay responsive
    expect(trainer.stepsDone).toBe(2);

    slept.length = 0;
    session.stallNextStep(10_000);
    const run = session.train(2, (u) => updates.push(u));
    await new Promise((r) => setTimeout(r, 0));
    session.pause();
    const r = await run;
    expect(r.end).toBe('paused');
    expect(r.stepsDone).toBe(2); // no step ran after the stall was cut short
    expect(slept.length).toBeLessThan(200);
    expect(() => session.stallNextStep(-1)).toThrow(RangeError);
  });

  it('stop() during a run resolves once the trainer is freed', async () => {
    const { trainer, session, emit } = setup();
    const run = session.train(100, emit);
    await new Promise((r) => setTimeout(r, 0));
    await session.stop();
    expect(trainer.destroyed).toBe(1);
    expect(session.state).toBe('closed');
    expect((await run).end).toBe('stopped');
  });
});
