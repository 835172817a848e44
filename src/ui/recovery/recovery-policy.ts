// When the page recovers a run by itself, and what it tells the user (pure; ./controller.ts does
// the work). A lost device, a hung GPU (the worker's onSubmittedWorkDone timeout) or a crashed
// worker restart the worker and continue the run from its last autosave (its run-library entry),
// losing at most one autosave interval; a stall found by the page's watchdog is recovered the same
// way with one click (a slow step must not be killed by a guess).

/** Error names (as they cross the worker boundary) after which the run is continued automatically. */
export const RECOVERABLE_ERRORS: ReadonlySet<string> = new Set(['DeviceLostError', 'GpuHangError', 'WorkerCrashedError']);

/** Automatic recoveries in a row (no chunk trained in between) before the page gives up and shows the error. */
export const MAX_AUTO_RECOVERIES = 2;

export type RecoveryCause = 'device-lost' | 'gpu-hung' | 'worker-crashed' | 'stalled' | 'restart';

export interface RecoveryNote {
  state: 'recovering' | 'recovered' | 'failed';
  cause: RecoveryCause;
  /** The error or stall that started it. */
  detail: string;
  /** Steps the run had trained when it happened. */
  lostAtStep: number;
  /** The step it continued from (its last autosave; 0 when it had none); null until known. */
  resumedAtStep: number | null;
  /** Why the recovery itself failed ('failed' only). */
  failure?: string;
}

/** The cause of a train() failure the page recovers from automatically, or null (a real error: shown as is). */
export function recoverableCause(e: unknown): RecoveryCause | null {
  if (!(e instanceof Error) || !RECOVERABLE_ERRORS.has(e.name)) return null;
  if (e.name === 'DeviceLostError') return 'device-lost';
  if (e.name === 'GpuHangError') return 'gpu-hung';
  // The page terminated the worker itself (a restart): nothing to recover.
  return (e as { reason?: string }).reason === 'terminated' ? null : 'worker-crashed';
}

const CAUSE_TEXT: Record<RecoveryCause, string> = {
  'device-lost': 'The GPU device was lost',
  'gpu-hung': 'The GPU stopped answering',
  'worker-crashed': 'The trainer worker crashed',
  stalled: 'The trainer stopped responding',
  restart: 'The worker was restarted',
};

/** One line for the page: what happened, and where the run went on from. */
export function recoveryText(n: RecoveryNote): string {
  const what = `${CAUSE_TEXT[n.cause]} at step ${n.lostAtStep}`;
  if (n.state === 'recovering') return `${what}. Restarting the worker with a fresh GPU device…`;
  if (n.state === 'failed') return `${what}, and recovering failed: ${n.failure ?? 'unknown error'}`;
  const from = n.resumedAtStep ?? 0;
  const lost = Math.max(0, n.lostAtStep - from);
  return from > 0
    ? `${what}. The worker was restarted and the run continued from its last autosave at step ${from} (${lost} step${lost === 1 ? '' : 's'} trained again).`
    : `${what}. The worker was restarted; the run had no autosave yet, so it started again from step 0 with its config.`;
}
