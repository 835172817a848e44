// Coalesces step metrics, evaluations, heartbeats and snapshot lists into at most one update per
// interval, so a fast trainer cannot flood the page's event loop. What arrives within the interval
// goes out when it ends (a timer), so nothing waits for the next step however long that takes; the
// caller drains the rest with `close()` at the end of a run.
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import type { TrainUpdate } from './protocol';

export type Clock = () => number;
export type Sleep = (ms: number) => Promise<void>;
/** Runs `fn` after `ms`; returns a cancel function. */
export type Timer = (fn: () => void, ms: number) => () => void;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const realTimer: Timer = (fn, ms) => {
  const id = setTimeout(fn, ms);
  return () => clearTimeout(id);
};

export class UpdateBatcher {
  private metrics: StepMetrics[] = [];
  private evals: EvalMetrics[] = [];
  private heartbeat: Heartbeat | null = null;
  private snapshotSteps: number[] | null = null;
  private lastEmit = -Infinity;
  private cancelTimer: (() => void) | null = null;

  constructor(
    private readonly emit: (u: TrainUpdate) => void,
    private readonly intervalMs: number,
    private readonly now: Clock = () => performance.now(),
    private readonly sleep: Sleep = realSleep,
    private readonly timer: Timer = realTimer,
  ) {}

  get pending(): boolean {
    return this.metrics.length > 0 || this.evals.length > 0 || this.heartbeat !== null || this.snapshotSteps !== null;
  }

  addMetrics(m: StepMetrics): void {
    this.metrics.push(m);
    this.maybeEmit();
  }

  addEval(e: EvalMetrics): void {
    this.evals.push(e);
    this.maybeEmit();
  }

  /** The full list of kept snapshot steps; only the latest list is sent. */
  setSnapshotSteps(steps: number[]): void {
    this.snapshotSteps = steps;
    this.maybeEmit();
  }

  setHeartbeat(h: Heartbeat): void {
    this.heartbeat = h;
    this.maybeEmit();
  }

  /** Sends what is pending, waiting out the rest of the interval first so the rate holds. */
  async close(): Promise<void> {
    if (!this.pending) return;
    const wait = this.lastEmit + this.intervalMs - this.now();
    if (wait > 0) await this.sleep(wait);
    this.send();
  }

  private maybeEmit(): void {
    const wait = this.lastEmit + this.intervalMs - this.now();
    if (wait <= 0) this.send();
    else
      this.cancelTimer ??= this.timer(() => {
        this.cancelTimer = null;
        this.send();
      }, wait);
  }

  private send(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    if (!this.pending) return;
    const update: TrainUpdate = { metrics: this.metrics, evals: this.evals, heartbeat: this.heartbeat, snapshotSteps: this.snapshotSteps };
    this.metrics = [];
    this.evals = [];
    this.heartbeat = null;
    this.snapshotSteps = null;
    this.lastEmit = this.now();
    this.emit(update);
  }
}
