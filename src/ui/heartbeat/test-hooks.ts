// With ?testHooks=1 the page exposes window.__nsaTest for the e2e suite: make the worker stall.
// Without it nothing is exposed and the worker refuses the hook.
import { debugStall, TEST_HOOKS } from '../controller';

export interface NsaTestHooks {
  /** The worker's next training step waits `ms` first (no heartbeats meanwhile). */
  stall(ms: number): Promise<void>;
}

export function installTestHooks(): void {
  if (!TEST_HOOKS) return;
  (globalThis as { __nsaTest?: NsaTestHooks }).__nsaTest = { stall: (ms) => debugStall(ms) };
}
