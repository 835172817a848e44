// Which evaluation the passkey's depth strip shows (DepthStrip.tsx): the last that scored keys by
// needle depth. Pure, for tests.
import type { DepthKeys, EvalMetrics } from '../../train/types';

/** The last evaluation that scored keys by depth, or null (not a passkey run, or none yet). */
export function latestDepth(evals: readonly EvalMetrics[]): { step: number; ranges: DepthKeys[] } | null {
  for (let i = evals.length - 1; i >= 0; i--) {
    const e = evals[i];
    if (e.keysByDepth?.length) return { step: e.step, ranges: e.keysByDepth };
  }
  return null;
}
