// The page's watchdog over the worker: while a train() call is active, no heartbeat for longer
// than the timeout means the worker is stuck (a GPU call that never returns, a hung shader, an
// endless loop). The clock starts at the later of the last beat and the start of the call, so a
// run resumed after a long pause is not stalled at once.
import type { Heartbeat, TrainerPhase } from '../../train/types';

export const MIN_WATCHDOG_SECONDS = 2;
export const MAX_WATCHDOG_SECONDS = 3600;

export interface Stall {
  /** Seconds since the last sign of life. */
  ageSeconds: number;
  /** The phase of the last heartbeat (what the worker was doing). */
  phase: TrainerPhase | 'starting';
  step: number;
}

export interface WatchdogInput {
  /** Date.now() */
  now: number;
  active: boolean;
  heartbeat: Heartbeat | null;
  /** Date.now() when the active train() call started. */
  since: number | null;
  timeoutSeconds: number;
}

export function checkStall(w: WatchdogInput): Stall | null {
  if (!w.active || w.since === null) return null;
  const lastSign = Math.max(w.heartbeat?.ts ?? -Infinity, w.since);
  const ageSeconds = (w.now - lastSign) / 1000;
  if (ageSeconds <= w.timeoutSeconds) return null;
  return { ageSeconds, phase: w.heartbeat?.phase ?? 'starting', step: w.heartbeat?.step ?? 0 };
}

/** The timeout field's value, or null when it is not a number of seconds in range. */
export function parseWatchdogSeconds(text: string): number | null {
  const v = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(v) && v >= MIN_WATCHDOG_SECONDS && v <= MAX_WATCHDOG_SECONDS ? v : null;
}

/** Seconds since the heartbeat, or null with none. */
export function heartbeatAge(h: Heartbeat | null, now: number): number | null {
  return h ? Math.max(0, (now - h.ts) / 1000) : null;
}
