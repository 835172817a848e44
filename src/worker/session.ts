// One training run inside the worker: drives a Trainer step by step, honours pause/stop between
// steps, takes checkpoints (validation loss, selection snapshots) when due, turns GPU reports
// (device lost, validation errors) into errors, passes the trainer's NonFiniteError on, and batches
// metrics for the page. The steps run through the one training loop (src/train/loop.ts). Independent of comlink and of the real Trainer, so it is testable.
import type { GpuReport } from '../gpu/context';
import { type StepSource, trainingLoop } from '../train/loop';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import { type Clock, type Sleep, UpdateBatcher } from './batcher';
import { stepDeadlineMs, type Timers, watchForHang } from './gpu-hang';
import { MAX_UPDATES_PER_SECOND, type TrainResult, type TrainUpdate } from './protocol';

/** What the session needs from a Trainer (src/train/trainer.ts satisfies it). */
export interface SessionTrainer extends StepSource {
  destroy(): void;
}

/** What the session needs from a GpuContext. */
export interface GpuReporter {
  onReport(cb: (r: GpuReport) => void): () => void;
  /** Resolves when the GPU has finished the work submitted so far (queue.onSubmittedWorkDone); enables the hang timeout. */
  workDone?(): Promise<void>;
  /** Resolves when the device is lost (GpuContext.lost). */
  lost?: Promise<GpuReport>;
}

/** DOMException names a WebGPU call rejects with when its device goes away (mapAsync aborted, device lost). */
const LOST_DEVICE_SYMPTOMS = new Set(['AbortError', 'OperationError']);
/** How long a failed GPU call waits for the device-lost report that explains it. */
const LOST_REPORT_WAIT_MS = 1000;

/** Work between steps that needs the GPU caught up: evaluation, selection snapshots. */
export interface Checkpoints {
  /** Whether to checkpoint after `stepsDone` optimizer steps. */
  due(stepsDone: number): boolean;
  /** Called with the GPU flushed (step stepsDone − 1 complete); reports what it produced. */
  take(stepsDone: number): Promise<CheckpointResult>;
}

export interface CheckpointResult {
  eval?: EvalMetrics;
  /** The kept snapshot steps, when they changed. */
  snapshotSteps?: number[];
}

/** A GPU report that ends the run; named 'DeviceLostError' for a lost device (the page recovers from that one). */
export class GpuFailureError extends Error {
  override readonly name: string;
  constructor(readonly report: GpuReport) {
    super(report.kind === 'device-lost' ? report.message : `GPU ${report.kind} error: ${report.message}`);
    this.name = report.kind === 'device-lost' ? 'DeviceLostError' : 'GpuFailureError';
  }
}

/**
 * Test faults (the page opened with ?testHooks=1): before step `atStep`, destroy the GPU device
 * ('lose-device') or block the worker's thread for `ms` ('block': no message, heartbeat or timer
 * runs meanwhile, as with an endless loop; only terminating the worker ends it sooner).
 */
export type TestFault = { kind: 'lose-device'; atStep: number } | { kind: 'block'; atStep: number; ms: number };

export type SessionState = 'ready' | 'training' | 'closed';

export interface SessionOptions {
  now?: Clock;
  sleep?: Sleep;
  checkpoints?: Checkpoints;
  /** Timers of the GPU hang timeout (default: setTimeout). */
  timers?: Timers;
  /** What 'lose-device' does (the run destroys its GPUDevice). */
  loseDevice?: () => void;
}

/** Granularity of a test stall: pause and stop still end it within this many ms. */
const STALL_POLL_MS = 50;

export class TrainingSession {
  private running = false;
  private pauseRequested = false;
  private stopRequested = false;
  private closed = false;
  private failure: Error | null = null;
  private rejectFailed: (e: Error) => void = () => {};
  private readonly failed: Promise<never>;
  private readonly unsubscribe: () => void;
  private batcher: UpdateBatcher | null = null;
  private last: StepMetrics | null = null;
  private stallMs = 0;
  private fault: TestFault | null = null;
  /** The slowest optimizer step so far (ms, wall clock in this worker); null before the first. */
  private slowestStepMs: number | null = null;
  private running$: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly trainer: SessionTrainer,
    private readonly gpu: GpuReporter,
    private readonly opts: SessionOptions = {},
  ) {
    this.failed = new Promise<never>((_, reject) => (this.rejectFailed = reject));
    this.failed.catch(() => {}); // observed through guard(); never an unhandled rejection
    this.unsubscribe = gpu.onReport((r) => this.fail(new GpuFailureError(r)));
  }

  get state(): SessionState {
    return this.closed ? 'closed' : this.running ? 'training' : 'ready';
  }

  get stepsDone(): number {
    return this.trainer.stepsDone;
  }

  /** Forwards a trainer heartbeat into the running train() call's updates. */
  onHeartbeat(h: Heartbeat): void {
    this.batcher?.setHeartbeat(h);
  }

  /** Runs `steps` more optimizer steps, or fewer when paused or stopped. */
  train(steps: number, emit: (u: TrainUpdate) => void): Promise<Omit<TrainResult, 'heartbeat'>> {
    const wasRunning = this.running;
    const p = this.trainLoop(steps, emit); // runs synchronously up to its first await
    if (!wasRunning) this.running$ = p.catch(() => {}); // what stop() waits for
    return p;
  }

  private async trainLoop(steps: number, emit: (u: TrainUpdate) => void): Promise<Omit<TrainResult, 'heartbeat'>> {
    if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`steps must be a positive integer (got ${steps})`);
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error('This run was stopped; initialise a new one to train again.');
    if (this.running) throw new Error('Training is already running; pause or stop it first.');
    this.running = true;
    this.pauseRequested = false;
    const batcher = new UpdateBatcher(emit, 1000 / MAX_UPDATES_PER_SECOND, this.opts.now, this.opts.sleep);
    this.batcher = batcher;
    const target = this.trainer.stepsDone + steps;
    try {
      const cp = this.opts.checkpoints;
      const loop = trainingLoop(this.trainer, {
        until: target,
        checkpointAfter: (n) => cp?.due(n) ?? false,
        shouldStop: () => this.pauseRequested || this.stopRequested,
        beforeStep: () => this.beforeStep(),
      });
      for (let r = await this.guardStep(loop.next()); !r.done; r = await this.guardStep(loop.next())) {
        const e = r.value;
        if (e.kind === 'step') {
          this.last = e.metrics;
          batcher.addMetrics(e.metrics);
        } else if (cp) {
          const c = await this.guard(cp.take(e.stepsDone));
          if (c.eval) batcher.addEval(c.eval);
          if (c.snapshotSteps) batcher.setSnapshotSteps(c.snapshotSteps);
        }
      }
    } catch (e) {
      this.fail(await this.explain(e instanceof Error ? e : new Error(String(e))));
    } finally {
      this.running = false;
      this.batcher = null;
      await batcher.close();
    }
    if (this.failure) {
      this.close();
      throw this.failure;
    }
    const end = this.stopRequested ? 'stopped' : this.trainer.stepsDone >= target ? 'done' : 'paused';
    if (end === 'stopped') this.close();
    return { end, stepsDone: this.trainer.stepsDone, last: this.last };
  }

  /** Ends the running train() call after the current step; the run can continue later. */
  pause(): void {
    if (this.running) this.pauseRequested = true;
  }

  /** Ends the run after the current step and frees its GPU memory; resolves once freed. */
  async stop(): Promise<void> {
    if (this.running) {
      this.stopRequested = true;
      await this.running$;
    }
    this.close();
  }

  /** Test hook: the next step waits `ms` first, sending nothing (a hung GPU, as the page sees it). */
  stallNextStep(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`stall must be a finite number of ms ≥ 0 (got ${ms})`);
    this.stallMs = ms;
  }

  /** Test hook: the fault happens before step `fault.atStep` (at once when the run is past it). */
  injectFault(fault: TestFault): void {
    if (!(Number.isInteger(fault.atStep) && fault.atStep >= 0)) throw new RangeError(`atStep must be an integer ≥ 0 (got ${fault.atStep})`);
    if (fault.kind === 'block' && !(Number.isFinite(fault.ms) && fault.ms >= 0))
      throw new RangeError(`block must be a finite number of ms ≥ 0 (got ${fault.ms})`);
    this.fault = fault;
  }

  private beforeStep(): Promise<void> {
    const f = this.fault;
    if (f && this.trainer.stepsDone >= f.atStep) {
      this.fault = null;
      if (f.kind === 'lose-device') this.opts.loseDevice?.();
      else this.block(f.ms);
    }
    return this.stallMs > 0 ? this.stall() : Promise.resolve();
  }

  /** Spins on the clock: the thread does nothing else until it returns (or the worker is terminated). */
  private block(ms: number): void {
    const now = this.opts.now ?? (() => performance.now());
    const end = now() + ms;
    for (let t = now(); t < end; t = now());
  }

  /**
   * A training-loop event, raced with the run's failure and, when the GPU can say whether its work
   * is done, with the hang timeout (its deadline follows the slowest step so far).
   */
  private async guardStep<T>(p: Promise<T>): Promise<T> {
    const gpu = this.gpu;
    if (!gpu.workDone) return this.guard(p);
    const now = this.opts.now ?? (() => performance.now());
    const start = now();
    const r = await this.guard(watchForHang(p, stepDeadlineMs(this.slowestStepMs), () => gpu.workDone!(), this.opts.timers));
    const ms = now() - start;
    this.slowestStepMs = Math.max(this.slowestStepMs ?? 0, ms);
    return r;
  }

  private async stall(): Promise<void> {
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    let left = this.stallMs;
    this.stallMs = 0;
    while (left > 0 && !this.pauseRequested && !this.stopRequested) {
      const ms = Math.min(STALL_POLL_MS, left);
      await sleep(ms);
      left -= ms;
    }
  }

  /**
   * A GPU call that failed because its device was lost (a mapAsync aborted by device.destroy(), say)
   * often rejects before the device's lost promise resolves: such an error waits briefly for that
   * report and becomes the device-lost failure (the page recovers from it by name).
   */
  private async explain(e: Error): Promise<Error> {
    const lost = this.gpu.lost;
    if (!lost || !LOST_DEVICE_SYMPTOMS.has(e.name)) return e;
    let handle: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((r) => (handle = setTimeout(() => r(null), LOST_REPORT_WAIT_MS)));
    const report = await Promise.race([lost, timeout]).finally(() => clearTimeout(handle));
    return report ? new GpuFailureError(report) : e;
  }

  private guard<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.failed]);
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    this.rejectFailed(e);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.trainer.destroy();
  }
}
