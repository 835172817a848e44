// With ?testHooks=1 the page exposes window.__nsaTest for the e2e suite: make the worker stall,
// lose its device or block its thread at a given step,
// feed the charts a synthetic long run (to measure rendering cost without GPU time), and make the
// run library's next write fail (a full quota).
// Without it nothing is exposed and the worker refuses the stall hook.
import type { StepMetrics } from '../../train/types';
import type { TestFault } from '../../worker/session';
import { debugFault, debugLoseDevice, debugStall, TEST_HOOKS } from '../controller';
import { libraryStorage } from '../library/library-actions';
import { useStore } from '../store';

export interface NsaTestHooks {
  /** The worker's next training step waits `ms` first (no heartbeats meanwhile). */
  stall(ms: number): Promise<void>;
  /** Before step `atStep` the worker destroys its GPU device, or blocks its thread for `ms`. */
  fault(f: TestFault): Promise<void>;
  /** The worker destroys its GPU device now (the run held, paused or training, loses it). */
  loseDevice(): Promise<void>;
  /**
   * Streams `steps` synthetic step metrics (with NSA gates) and an evaluation every 100 steps into
   * the page's state, `perUpdate` steps per update at the worker's batching rate (10 per second),
   * as a long run would. Resolves when all are in; they stay until Reset.
   */
  simulateRun(steps: number, perUpdate: number): Promise<void>;
  /** The run library's next write fails with a DOMException of this name (e.g. 'QuotaExceededError'), storing nothing. */
  failNextStorageWrite(errorName: string): void;
}

function fakeMetrics(step: number): StepMetrics {
  const noise = Math.sin(step * 12.9898) * 0.05;
  return {
    step,
    loss: 2 + 3.5 * Math.exp(-step / 1500) + noise,
    lr: 1e-3 * Math.min(1, (step + 1) / 100),
    gradNorm: 0.5 + Math.abs(noise) * 4,
    tokensPerSecond: 50_000 + noise * 1e5,
    stepMs: 10,
    elapsedMs: step * 10,
    nsa: {
      gateMean: [0.3 + noise, 0.5 - noise, 0.6],
      histogram: [],
      invalid: 0,
      keysPerQuery: [12, 24 + (step % 7), 8],
      perLayer: [],
    },
  };
}

async function simulateRun(steps: number, perUpdate: number): Promise<void> {
  const s = useStore.getState();
  s.clearRun();
  for (let start = 0; start < steps; start += perUpdate) {
    const metrics = Array.from({ length: Math.min(perUpdate, steps - start) }, (_, i) => fakeMetrics(start + i));
    const evals = metrics.filter((m) => (m.step + 1) % 100 === 0).map((m) => ({ step: m.step + 1, valLoss: m.loss + 0.1 }));
    useStore.getState().applyUpdate({ metrics, evals, heartbeat: null, snapshotSteps: null });
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function installTestHooks(): void {
  if (!TEST_HOOKS) return;
  const hooks: NsaTestHooks = {
    stall: (ms) => debugStall(ms),
    fault: (f) => debugFault(f),
    loseDevice: () => debugLoseDevice(),
    simulateRun,
    failNextStorageWrite: (name) => libraryStorage.failNextWrite(new DOMException(`injected ${name} (test hook)`, name)),
  };
  (globalThis as { __nsaTest?: NsaTestHooks }).__nsaTest = hooks;
}
