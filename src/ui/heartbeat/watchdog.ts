// The page's watchdog over the worker. It runs on the page's main thread, outside the training
// step (the worker trains; a blocked or hung worker cannot silence it): while a train() call is
// active, no heartbeat for longer than the timeout means the worker is stuck (a GPU call that never
// returns, a hung shader, an endless loop). The clock starts at the later of the last beat and the
// start of the call, so a run resumed after a long pause is not stalled at once.
//
// The timeout adapts to the run: the user's value (default 60 s) is a floor; once steps are
// measured it is at least STEP_FACTOR × the slowest step so far, before the first one at least
// STEP_FACTOR × a rough estimate from the model's FLOPs and the adapter kind, and an evaluation
// may take as many steps' worth as it has batches. A normal step never trips it (the small preset
// at ≈ 70 s a step on a CPU adapter waits ≥ 210 s).
import type { Heartbeat, TrainerPhase } from '../../train/types';

export const MIN_WATCHDOG_SECONDS = 2;
export const MAX_WATCHDOG_SECONDS = 3600;
/** The default floor of the timeout. */
export const DEFAULT_WATCHDOG_SECONDS = 60;
/** A step may take this many times the slowest measured step (or the estimate) before it is a stall. */
export const STEP_FACTOR = 3;
/** FLOP/s assumed for the first-step estimate: low on purpose (a slow estimate only delays a real alarm). */
export const ASSUMED_FLOPS = { software: 1e9, hardware: 1e11 } as const;

export interface Stall {
  /** Seconds since the last sign of life. */
  ageSeconds: number;
  /** The timeout that was exceeded (seconds). */
  timeoutSeconds: number;
  /** The phase of the last heartbeat (what the worker was doing). */
  phase: TrainerPhase | 'starting';
  step: number;
}

/** What the timeout adapts to. */
export interface StepTiming {
  /** The slowest measured optimizer step (ms), or null before the first. */
  slowestStepMs: number | null;
  /** Rough time of one step before any is measured (ms), or null when unknown. */
  estimatedStepMs: number | null;
  /** An evaluation's batches per optimizer step's micro-batches (evalBatches / gradAccum). */
  evalStepRatio: number;
}

export interface WatchdogInput {
  /** Date.now() */
  now: number;
  active: boolean;
  heartbeat: Heartbeat | null;
  /** Date.now() when the active train() call started. */
  since: number | null;
  /** The user's timeout: the floor of the adaptive one. */
  timeoutSeconds: number;
  timing?: StepTiming;
}

/** The timeout (seconds) for the phase the worker is in. */
export function adaptiveTimeoutSeconds(floorSeconds: number, phase: TrainerPhase | 'starting', timing: StepTiming | undefined): number {
  if (!timing) return floorSeconds;
  const stepMs = timing.slowestStepMs ?? timing.estimatedStepMs ?? 0;
  const perStep = (STEP_FACTOR * stepMs) / 1000;
  const steps = phase === 'eval' ? Math.max(1, timing.evalStepRatio) : 1;
  return Math.max(floorSeconds, perStep * steps);
}

export function checkStall(w: WatchdogInput): Stall | null {
  if (!w.active || w.since === null) return null;
  const lastSign = Math.max(w.heartbeat?.ts ?? -Infinity, w.since);
  const ageSeconds = (w.now - lastSign) / 1000;
  const phase = w.heartbeat?.phase ?? 'starting';
  const timeoutSeconds = adaptiveTimeoutSeconds(w.timeoutSeconds, phase, w.timing);
  if (ageSeconds <= timeoutSeconds) return null;
  return { ageSeconds, timeoutSeconds, phase, step: w.heartbeat?.step ?? 0 };
}

/** Rough ms of one step: 6 FLOPs per parameter and token (forward + backward) at ASSUMED_FLOPS. */
export function estimateStepMs(paramCount: number, tokensPerStep: number, software: boolean): number {
  return ((6 * paramCount * tokensPerStep) / (software ? ASSUMED_FLOPS.software : ASSUMED_FLOPS.hardware)) * 1000;
}

export const PHASE_TEXT: Record<string, string> = {
  init: 'building the model',
  data: 'preparing a batch',
  step: 'a training step on the GPU',
  eval: 'evaluating the validation loss',
  idle: 'idle between steps',
  starting: 'starting the first step',
};

/** What to do about a stall: restart, or raise the timeout when the steps are just slow. */
export function stallAdvice(s: Stall): string {
  const raise = Math.min(MAX_WATCHDOG_SECONDS, Math.ceil((s.ageSeconds * 2) / 10) * 10);
  return (
    `The GPU may be hung, or this ${s.phase === 'eval' ? 'evaluation' : 'step'} is slower than the watchdog expects. ` +
    'Restarting terminates the worker, drops its GPU device and starts a fresh one; the run continues from its last autosave ' +
    `(at most one autosave interval is trained again). If the worker is only slow, leave it running or raise "Watchdog timeout" ` +
    `in the Heartbeat panel (to ${raise} s or more).`
  );
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
