// The worker's GPU-side timeout. A training step that is still unfinished long after the slowest
// step so far asks the GPU whether its submitted work is done (queue.onSubmittedWorkDone); when
// the GPU does not answer within another such deadline, it is hung: the step fails with
// GpuHangError and the page restarts the worker and continues from the run's last autosave. Slow
// but moving work never trips it: the deadline follows the slowest step seen (never below a floor),
// the first step gets a long allowance (its speed is unknown), and a GPU that answers re-arms it.

/** The first step's deadline: nothing is measured yet (m7c-125m on a software adapter takes minutes). */
export const FIRST_STEP_DEADLINE_MS = 15 * 60_000;
/** No later step is declared hung sooner than this. */
export const STEP_DEADLINE_FLOOR_MS = 60_000;
/** A later step may take this many times the slowest step so far. */
export const STEP_DEADLINE_FACTOR = 10;

export class GpuHangError extends Error {
  override readonly name = 'GpuHangError';
  constructor(readonly waitedMs: number) {
    super(
      `The GPU did not finish its submitted work within ${Math.round(waitedMs / 1000)} s (queue.onSubmittedWorkDone never answered): ` +
        'it is hung or lost. The page restarts the worker and continues from the last autosave.',
    );
  }
}

/** How long the next step may take before the GPU is asked whether it is still working. */
export function stepDeadlineMs(slowestStepMs: number | null): number {
  if (slowestStepMs === null) return FIRST_STEP_DEADLINE_MS;
  return Math.max(STEP_DEADLINE_FLOOR_MS, STEP_DEADLINE_FACTOR * slowestStepMs);
}

export interface Timers {
  set(cb: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const REAL_TIMERS: Timers = {
  set: (cb, ms) => setTimeout(cb, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

const TIMEOUT = Symbol('timeout');

function within<T>(p: Promise<T>, ms: number, timers: Timers): Promise<T | typeof TIMEOUT> {
  let handle: unknown;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => (handle = timers.set(() => resolve(TIMEOUT), ms)));
  return Promise.race([p, timeout]).finally(() => timers.clear(handle));
}

/**
 * `work`'s result, or GpuHangError when it is unfinished after `deadlineMs` and `workDone()` (the
 * GPU's queue draining) does not resolve within another `deadlineMs`. When the GPU answers, the
 * work is slow on this side, not hung: it is given another deadline, as often as needed.
 */
export async function watchForHang<T>(
  work: Promise<T>,
  deadlineMs: number,
  workDone: () => Promise<void>,
  timers: Timers = REAL_TIMERS,
): Promise<T> {
  let waited = 0;
  for (;;) {
    const r = await within(work, deadlineMs, timers);
    if (r !== TIMEOUT) return r;
    waited += deadlineMs;
    const answer = await within(workDone(), deadlineMs, timers);
    waited += deadlineMs;
    if (answer === TIMEOUT) throw new GpuHangError(waited);
  }
}
