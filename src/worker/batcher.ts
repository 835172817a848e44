// Coalesces step metrics, evaluations, heartbeats and snapshot lists into at most one update per
// interval, so a fast trainer cannot flood the page's event loop. No timers: an update goes out when something arrives after
// the interval has passed, and the caller drains the rest with `close()` at the end of a run.
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import type { TrainUpdate } from './protocol';

export type Clock = () => number;
export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class UpdateBatcher {
  private metrics: StepMetrics[] = [];
  private evals: EvalMetrics[] = [];
  private heartbeat: Heartbeat | null = null;
  private snapshotSteps: number[] | null = null;
  private lastEmit = -Infinity;

  constructor(
    private readonly emit: (u: TrainUpdate) => void,
    private readonly intervalMs: number,
    private readonly now: Clock = () => performance.now(),
    private readonly sleep: Sleep = realSleep,
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
    if (this.now() - this.lastEmit >= this.intervalMs) this.send();
  }

  private send(): void {
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
