// Connects the page to the trainer worker: every GPU call happens there, the page only renders.
import { preset } from '../model/presets';
import { TrainerClient } from '../worker/client';
import { parseSteps, useStore } from './store';

let client: TrainerClient | null = null;

function worker(): TrainerClient {
  client ??= new TrainerClient();
  return client;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Asks the worker for its adapter; the page shows it, or why WebGPU is unavailable. */
export async function probeAdapter(): Promise<void> {
  const { setAdapter } = useStore.getState();
  try {
    const r = await worker().getAdapter();
    setAdapter(r.ok ? { status: 'ready', summary: r.adapter } : { status: 'unavailable', message: r.message });
  } catch (e) {
    setAdapter({ status: 'unavailable', message: message(e) });
  }
}

async function trainSteps(steps: number): Promise<void> {
  const s = useStore.getState();
  s.setStatus('training');
  try {
    s.runEnded(await worker().train(steps, (u) => useStore.getState().applyUpdate(u)));
  } catch (e) {
    s.runFailed(message(e));
  }
}

/** A new run of the `tiny` preset for the number of steps in the steps field. */
export async function startTraining(): Promise<void> {
  const s = useStore.getState();
  const steps = parseSteps(s.stepsText);
  if (steps === null) return;
  const config = preset('tiny');
  config.train.steps = steps; // the LR schedule spans the requested run
  s.runStarting(steps);
  try {
    await worker().init(config);
  } catch (e) {
    s.runFailed(message(e));
    return;
  }
  await trainSteps(steps);
}

export async function pauseTraining(): Promise<void> {
  useStore.getState().setStatus('pausing');
  await worker().pause();
}

export async function resumeTraining(): Promise<void> {
  const { target, stepsDone } = useStore.getState();
  if (stepsDone < target) await trainSteps(target - stepsDone);
}

export async function stopTraining(): Promise<void> {
  const s = useStore.getState();
  const wasPaused = s.status === 'paused';
  s.setStatus('stopping');
  await worker().stop();
  // A paused run has no train() call to report the stop.
  if (wasPaused) s.setStatus('stopped');
}
