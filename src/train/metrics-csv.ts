// metrics.csv rows, browser-safe (no node: imports): the CLI's run folder (run-files.ts) and the
// page's worker write the same columns.
import type { EvalMetrics, StepMetrics } from './types';

// gate_*: the NSA gates' mean per branch over the step (empty for dense models); accuracy: the
// recall task's answer accuracy at an evaluation (empty otherwise); needle_selected: at a task
// evaluation of NSA, MoBA or DSA, the share of answers whose source a selection read (needle-read.ts).
export const METRICS_HEADER =
  'step,loss,val_loss,lr,grad_norm,tokens_per_s,step_ms,elapsed_ms,gate_cmp,gate_sel,gate_win,accuracy,needle_selected';

export function metricsCsvRow(m: StepMetrics | null, e: EvalMetrics | null): string {
  const f = (x: number | undefined | null) => (x === undefined || x === null ? '' : String(x));
  return [
    f(m?.step ?? e?.step),
    f(m?.loss),
    f(e?.valLoss),
    f(m?.lr),
    f(m?.gradNorm),
    f(m?.tokensPerSecond),
    f(m?.stepMs),
    f(m?.elapsedMs),
    f(m?.nsa?.gateMean[0]),
    f(m?.nsa?.gateMean[1]),
    f(m?.nsa?.gateMean[2]),
    f(e?.accuracy),
    f(e?.needleSelected),
  ].join(',');
}

/** metrics.csv rows in the order a run writes them: each evaluation after the step that preceded it. */
export function csvRows(metrics: readonly StepMetrics[], evals: readonly EvalMetrics[]): Array<[StepMetrics | null, EvalMetrics | null]> {
  const rows: Array<[StepMetrics | null, EvalMetrics | null]> = [];
  const pending = [...evals];
  for (const m of metrics) {
    rows.push([m, null]);
    while (pending.length && pending[0].step <= m.step + 1) rows.push([null, pending.shift()!]);
  }
  for (const e of pending) rows.push([null, e]);
  return rows;
}
