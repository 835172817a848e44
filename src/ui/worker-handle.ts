// The page's one trainer worker: created on first use, asked for its adapter (with a timeout:
// a GPU still busy with a terminated worker's work must not leave the page "looking for an
// adapter" forever), and dropped (device destroyed, then terminated) when it is stuck or its GPU
// is gone. ./controller.ts drives it.
import { TrainerClient } from '../worker/client';
import { useStore } from './store';

let client: TrainerClient | null = null;
let deviceLost: (message: string) => void = () => {};

/** The current worker, created when there is none (it reports a lost device to onWorkerDeviceLost's handler). */
export function worker(): TrainerClient {
  if (!client) {
    const w = new TrainerClient();
    client = w;
    w.onDeviceLost((m) => {
      if (client === w) deviceLost(m);
    }).catch(() => {});
  }
  return client;
}

/** Sets what happens when the current worker's device is lost (the controller recovers the run). */
export function onWorkerDeviceLost(handler: (message: string) => void): void {
  deviceLost = handler;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** How long the worker may take to name its adapter and create a device before it is replaced. */
export const PROBE_TIMEOUT_MS = 30_000;
/** Fresh workers tried before the page says the GPU does not answer (and offers "Try again"). */
export const PROBE_ATTEMPTS = 3;
/** How long a worker being replaced may take to destroy its device (a stuck one never answers). */
const RELEASE_WAIT_MS = 1_000;

const TIMED_OUT = Symbol('timed out');

function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((r) => (handle = setTimeout(() => r(TIMED_OUT), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(handle));
}

/** Asks the worker to destroy its device, then terminates it (a stalled GPU call or a blocked thread included). */
export async function dropWorker(): Promise<void> {
  const old = client;
  client = null;
  if (!old) return;
  await within(
    old.releaseDevice().catch(() => {}),
    RELEASE_WAIT_MS,
  );
  old.terminate();
}

/**
 * How long a cancelled run's step in flight may take to end (the worker's reset() to answer)
 * before the worker is dropped: its device destroyed, then the worker terminated. A training step
 * of the tiny preset takes well under a second on SwiftShader; m7c-125m's takes minutes there.
 */
export const STEP_CANCEL_MS = 3_000;

/**
 * Ends the worker's run, a step in flight included: asks the worker to reset, and drops the worker
 * (device destroyed, worker terminated; the next call gets a fresh worker and device) when that
 * does not answer within `ms`. Resolves 'none' (no worker), 'reset' or 'dropped'.
 */
export async function cancelWorkerRun(ms: number = STEP_CANCEL_MS): Promise<'none' | 'reset' | 'dropped'> {
  const w = client;
  if (!w) return 'none';
  const r = await within(
    w.reset().then(
      () => true,
      () => false,
    ),
    ms,
  );
  if (r === true) return 'reset';
  if (client === w) await dropWorker();
  return 'dropped';
}

/**
 * Asks the worker for its adapter; the page shows it, or why WebGPU is unavailable. A worker that
 * does not answer within PROBE_TIMEOUT_MS (a GPU still busy with a terminated worker's work) is
 * replaced by a fresh one, up to PROBE_ATTEMPTS times; then the page says so and offers "Try again".
 */
export async function probeAdapter(): Promise<void> {
  const { setAdapter } = useStore.getState();
  for (let attempt = 1; ; attempt++) {
    const w = worker();
    let r: Awaited<ReturnType<TrainerClient['getAdapter']>> | typeof TIMED_OUT;
    try {
      r = await within(w.getAdapter(), PROBE_TIMEOUT_MS);
    } catch (e) {
      if (w === client) setAdapter({ status: 'unavailable', message: message(e), retry: true });
      return;
    }
    if (w !== client) return;
    if (r !== TIMED_OUT) {
      setAdapter(r.ok ? { status: 'ready', summary: r.adapter } : { status: 'unavailable', message: r.message });
      return;
    }
    await dropWorker();
    const waited = (attempt * PROBE_TIMEOUT_MS) / 1000;
    if (attempt >= PROBE_ATTEMPTS) {
      setAdapter({
        status: 'unavailable',
        retry: true,
        message:
          `The GPU did not give this page a device in ${waited} s (${attempt} fresh workers). It is probably still busy with work ` +
          'that a stopped worker left on it, or another tab is using it. Wait a little and press "Try again"; if it still does not ' +
          'answer, close other tabs that use the GPU, then restart the browser.',
      });
      return;
    }
    setAdapter({
      status: 'probing',
      note: `The GPU has not answered for ${waited} s; trying a fresh worker (attempt ${attempt + 1} of ${PROBE_ATTEMPTS})…`,
    });
  }
}
