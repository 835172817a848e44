// When the page autosaves its run, and how many trained steps a reload would lose (pure; the
// controller and ./library/autosave-run.ts do the work).
//
// Design: the worker can only write a checkpoint between train() calls, so the controller trains
// in chunks that end at every multiple of AUTOSAVE_EVERY steps, saves between two chunks (the page
// keeps showing 'running'), and goes on unless a pause was asked meanwhile; it also saves after
// every pause, Step and the end of the run, and when the tab is hidden while paused or done, into
// the run's entry of the run library (./library).
// Chunking changes no result: a run trained in pieces equals the uninterrupted one bit for bit.
import type { RunConfig } from '../train/config';
import type { RunStatus } from './store';

/** Steps between autosaves while training. */
export const AUTOSAVE_EVERY = 50;

/**
 * Steps for the next train() call of a call for `left` more steps: up to the next multiple of
 * `every` (an autosave is due there), at least one, at most `left`; `every` ≤ 0 disables chunking.
 */
export function autosaveChunk(stepsDone: number, left: number, every: number = AUTOSAVE_EVERY): number {
  if (left <= 0) return 0;
  if (every <= 0) return left;
  return Math.min(left, every - (stepsDone % every));
}

/**
 * Trained steps not in the autosave: a reload (or Reset) would lose them. A run that does not exist
 * or failed has none to keep; `autosavedStep` is the step of the last save of this run (a run
 * continued from a checkpoint starts saved at its step).
 */
export function unsavedSteps(s: { status: RunStatus; stepsDone: number; autosavedStep: number }): number {
  if (s.status === 'idle' || s.status === 'starting' || s.status === 'error') return 0;
  return Math.max(0, s.stepsDone - s.autosavedStep);
}

/** "tiny · 2 layers · dim 64 · NSA · T 128 · 200 steps · brown" */
export function configSummary(c: RunConfig, preset: string): string {
  const m = c.model;
  return [
    preset,
    `${m.nLayers} layers`,
    `dim ${m.dim}`,
    m.attention === 'nsa' ? 'NSA' : m.attention,
    `T ${m.seqLen}`,
    `${c.train.steps} steps`,
    c.data.source,
  ].join(' · ');
}
