// Chart redraws one at a time: recharts draws a chart in one synchronous piece (its internal store
// re-renders the chart synchronously), so redrawing every chart in the same task makes one long
// task per refresh. Queued redraws run one per animation frame, each in its own task, so frames
// (and heartbeats, input) get through between them.

/** Calls `run` at the next slot (in the page: after the next animation frame, in a fresh task). */
export type SlotScheduler = (run: () => void) => void;

export const nextFrameTask: SlotScheduler = (run) => requestAnimationFrame(() => setTimeout(run, 0));

export class RedrawQueue {
  /** Waiting redraws in request order, one per key. */
  private readonly jobs = new Map<string, () => void>();
  private scheduled = false;

  constructor(private readonly slot: SlotScheduler) {}

  /** Runs `job` in a slot of its own; a key already waiting keeps its place and takes the new job. */
  request(key: string, job: () => void): void {
    this.jobs.set(key, job);
    this.schedule();
  }

  cancel(key: string): void {
    this.jobs.delete(key);
  }

  get waiting(): number {
    return this.jobs.size;
  }

  private schedule(): void {
    if (this.scheduled || this.jobs.size === 0) return;
    this.scheduled = true;
    this.slot(() => {
      this.scheduled = false;
      const next = this.jobs.entries().next();
      if (!next.done) {
        const [key, job] = next.value;
        this.jobs.delete(key);
        try {
          job();
        } finally {
          this.schedule();
        }
      }
    });
  }
}
