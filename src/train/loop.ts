// The one training loop every caller runs (CLI, worker, bench, recall eval, tests): it drives a
// step source until a target step count and yields each step's metrics exactly once, in step
// order, plus a checkpoint event whenever the caller asks for one — with the GPU flushed, so the
// caller can evaluate, snapshot or save in the loop body while the generator waits. Errors (a
// non-finite step: NonFiniteError; a diverged run: DivergenceError, see divergence.ts; an invalid
// selection) propagate from the source unchanged.
import type { StepMetrics } from './types';

/** What the loop needs from a Trainer (src/train/trainer.ts satisfies it). */
export interface StepSource {
  /** One optimizer step; resolves with the metrics that became ready (one step late). */
  step(): Promise<StepMetrics[]>;
  /** Waits for the GPU; resolves with every step's metrics not yet returned. */
  flush(): Promise<StepMetrics[]>;
  readonly stepsDone: number;
}

export type TrainEvent =
  | { kind: 'step'; metrics: StepMetrics }
  /** Every submitted step is complete and its metrics were yielded; stepsDone steps are done. */
  | { kind: 'checkpoint'; stepsDone: number };

export interface LoopOptions {
  /** Train until the source has done this many steps in all. */
  until: number;
  /** Asked after each step is submitted: true flushes and yields a checkpoint event. */
  checkpointAfter?(stepsDone: number): boolean;
  /** Asked before each step: true ends the loop (pause, stop, a fatal GPU report); the tail is still flushed. */
  shouldStop?(): boolean;
  /** Awaited before each step (a test stall). */
  beforeStep?(): Promise<void>;
}

export async function* trainingLoop(src: StepSource, o: LoopOptions): AsyncGenerator<TrainEvent, void, undefined> {
  if (!Number.isInteger(o.until) || o.until < 0) throw new RangeError(`trainingLoop: until must be an integer ≥ 0 (got ${o.until})`);
  let last = -Infinity;
  // Sources guarantee once-only metrics; the loop checks it, so a broken source fails loudly.
  const inOrder = function* (ms: StepMetrics[]): Generator<TrainEvent> {
    for (const m of ms) {
      if (m.step <= last) throw new Error(`trainingLoop: step ${m.step} reported after step ${last}`);
      last = m.step;
      yield { kind: 'step', metrics: m };
    }
  };
  while (src.stepsDone < o.until) {
    if (o.shouldStop?.()) break;
    if (o.beforeStep) {
      await o.beforeStep();
      if (o.shouldStop?.()) break;
    }
    yield* inOrder(await src.step());
    if (o.checkpointAfter?.(src.stepsDone)) {
      yield* inOrder(await src.flush());
      yield { kind: 'checkpoint', stepsDone: src.stepsDone };
    }
  }
  yield* inOrder(await src.flush());
}

/** Runs the loop to the end and returns every step's metrics (tests, benchmarks, probes). */
export async function trainSteps(src: StepSource, until: number): Promise<StepMetrics[]> {
  const out: StepMetrics[] = [];
  for await (const e of trainingLoop(src, { until })) if (e.kind === 'step') out.push(e.metrics);
  return out;
}
