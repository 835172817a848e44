// TrainingSession: the worker's run loop, driven by a fake trainer with the real Trainer's
// contract (metrics one step late, flush returns the last step's metrics again).
import { describe, expect, it } from 'vitest';
import type { GpuReport } from '../../src/gpu/context';
import type { StepMetrics } from '../../src/train/types';
import type { TrainUpdate } from '../../src/worker/protocol';
import { DivergedError, GpuFailureError, TrainingSession, type GpuReporter, type StepSource } from '../../src/worker/session';

class FakeTrainer implements StepSource {
  stepsDone = 0;
  destroyed = 0;
  /** Called before each step resolves; may pause/stop the session or hang the step. */
  beforeStep: (step: number) => void | Promise<void> = () => {};
  private pending: number | null = null;
  private last: StepMetrics | null = null;

  constructor(private readonly loss: (step: number) => number = (s) => 5 - 0.1 * s) {}

  private metrics(step: number): StepMetrics {
    return { step, loss: this.loss(step), lr: 1e-3, gradNorm: 1, tokensPerSecond: 512, stepMs: 1, elapsedMs: step };
  }

  async step(): Promise<StepMetrics | null> {
    await this.beforeStep(this.stepsDone);
    await new Promise((r) => setTimeout(r, 0)); // let other messages (pause, stop) run, as a real GPU wait does
    const prev = this.pending;
    this.pending = this.stepsDone++;
    if (prev === null) return null;
    this.last = this.metrics(prev);
    return this.last;
  }

  async flush(): Promise<StepMetrics | null> {
    if (this.pending !== null) this.last = this.metrics(this.pending);
    this.pending = null;
    return this.last;
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

function setup(loss?: (step: number) => number) {
  const trainer = new FakeTrainer(loss);
  const gpu = new FakeGpu();
  let t = 0;
  // Fake clock: every update is allowed (the batcher has its own tests); close() never sleeps.
  const session = new TrainingSession(trainer, gpu, { now: () => (t += 1000), sleep: async () => {} });
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
    trainer.beforeStep = (s) => {
      if (s === 2) session.stop();
    };
    const r = await session.train(10, emit);
    expect(r.end).toBe('stopped');
    expect(r.stepsDone).toBe(3);
    expect(trainer.destroyed).toBe(1);
    expect(gpu.subscribers).toBe(0);
    session.stop();
    expect(trainer.destroyed).toBe(1);
    await expect(session.train(1, emit)).rejects.toThrow(/stopped/);
  });

  it('stop while idle frees the trainer at once', () => {
    const { trainer, session } = setup();
    session.stop();
    expect(trainer.destroyed).toBe(1);
    expect(session.state).toBe('closed');
  });

  it('a non-finite loss fails the run with a readable message, after sending the good steps', async () => {
    const { trainer, session, emit, steps } = setup((s) => (s === 3 ? NaN : 5 - s));
    const err = await session.train(10, emit).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DivergedError);
    expect((err as Error).message).toMatch(/diverged: the loss is NaN at step 3/);
    expect(steps()).toEqual([0, 1, 2]);
    expect(trainer.destroyed).toBe(1);
    await expect(session.train(1, emit)).rejects.toThrow(/NaN at step 3/);
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
    expect(trainer.destroyed).toBe(1);
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
});
