// Elapsed time and ETA of a run, as numbers and text.
import type { StepMetrics } from '../../train/types';

/** Steps the ETA averages over (recent steps: the rate settles after warm-up and checkpoints). */
export const ETA_WINDOW = 20;

/** Mean ms per step over the last `window` steps, or null with none yet. */
export function recentStepMs(metrics: readonly StepMetrics[], window = ETA_WINDOW): number | null {
  const recent = metrics.slice(-window);
  if (recent.length === 0) return null;
  return recent.reduce((a, m) => a + m.stepMs, 0) / recent.length;
}

/** Time left for the remaining steps at the recent rate, or null when unknown or nothing is left. */
export function etaMs(metrics: readonly StepMetrics[], stepsDone: number, target: number): number | null {
  const per = recentStepMs(metrics);
  if (per === null || !Number.isFinite(per) || stepsDone >= target) return null;
  return per * (target - stepsDone);
}

/** 0:07, 3:25, 1:02:09 (h:mm:ss once past an hour); '–' for null. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return '–';
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
