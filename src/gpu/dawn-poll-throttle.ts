// dawn.node (npm `webgpu`) completes async work (mapAsync, onSubmittedWorkDone, pipeline
// creation) by polling: while any such promise is pending, its AsyncRunner calls the global
// setImmediate with a fresh native function that runs the instance's ProcessEvents and schedules
// itself again. That is a busy loop on the main thread, a JS function created per turn and
// finalized by the GC. On a GPU it costs one core and nothing else. On a software adapter the
// "GPU" is SwiftShader's worker threads on the same cores, and the loop takes CPU from them: on
// this project's 2-core machine a tiny-preset training run (24 steps) took 23.6 s of user CPU and
// 13.2 s of wall time polling, 13.8 s and 8.6 s with the throttle below.
//
// The throttle: a wait's first SPIN_MS of turns stay immediate (a short wait costs no latency);
// after that each turn is a POLL_MS timer. Only native callbacks are throttled (Dawn's; the
// callbacks of JS code are JS functions), and only when installed, which acquireNodeGpu does for
// software adapters alone, so GPU figures are taken with Dawn's own polling.

/** Continuous immediate turns allowed at the start of a wait (ms). */
export const SPIN_MS = 0.25;
/** Period of the turns after that (ms): the latency a long wait gains at most. */
export const POLL_MS = 1;

/** A quiet gap between turns longer than this starts a new wait (ms). */
const NEW_WAIT_GAP_MS = 2 * POLL_MS + 1;

export type Scheduler = (callback: (...args: unknown[]) => void, ...args: unknown[]) => unknown;

/** True for a function implemented natively (how dawn.node's polling turns arrive). */
export function isNativeFunction(f: unknown): boolean {
  return typeof f === 'function' && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f));
}

/**
 * The setImmediate that throttles long runs of native callbacks: immediate for the first SPIN_MS of
 * a run, then through `timer(callback, POLL_MS)`. `now` in ms.
 */
export function throttledSetImmediate(
  immediate: Scheduler,
  timer: (cb: (...a: unknown[]) => void, ms: number, ...a: unknown[]) => unknown,
  now: () => number,
): Scheduler {
  let waitStart = 0;
  let lastTurn = -Infinity;
  return (callback, ...args) => {
    if (isNativeFunction(callback)) {
      const t = now();
      if (t - lastTurn > NEW_WAIT_GAP_MS) waitStart = t;
      lastTurn = t;
      if (t - waitStart > SPIN_MS) return timer(callback, POLL_MS, ...args);
    }
    return immediate(callback, ...args);
  };
}

let installed = false;

/** Replaces the global setImmediate with the throttled one (once per process). */
export function throttleDawnPolling(): void {
  if (installed) return;
  installed = true;
  const immediate = globalThis.setImmediate.bind(globalThis) as unknown as Scheduler;
  const timer = globalThis.setTimeout.bind(globalThis) as unknown as (
    cb: (...a: unknown[]) => void,
    ms: number,
    ...a: unknown[]
  ) => unknown;
  const throttled = throttledSetImmediate(immediate, timer, () => performance.now());
  // Keep the original's own properties (util.promisify's custom form among them).
  const { length: _length, name: _name, prototype: _prototype, ...own } = Object.getOwnPropertyDescriptors(globalThis.setImmediate);
  Object.defineProperties(throttled, own);
  (globalThis as unknown as { setImmediate: Scheduler }).setImmediate = throttled;
}
