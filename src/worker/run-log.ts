// A run's record in the worker, written in the CLI's formats: every heartbeat (heartbeat.jsonl)
// and one metrics row per step or evaluation in the order they happened (metrics.csv).
import { METRICS_HEADER, metricsCsvRow } from '../train/metrics-csv';
import type { EvalMetrics, Heartbeat, StepMetrics, TrainerPhase } from '../train/types';

export class RunLog {
  private readonly beats: Heartbeat[] = [];
  private readonly rows: string[] = [];

  get lastHeartbeat(): Heartbeat | null {
    return this.beats.at(-1) ?? null;
  }

  get heartbeatCount(): number {
    return this.beats.length;
  }

  heartbeat(b: Heartbeat): void {
    this.beats.push(b);
  }

  /** Logs a heartbeat the worker makes itself (pause, end of run): the last beat's numbers, a new phase and message. */
  mark(phase: TrainerPhase, msg: string, now: number = Date.now()): Heartbeat {
    const last = this.lastHeartbeat;
    const b: Heartbeat = {
      ts: now,
      iso: new Date(now).toISOString(),
      step: last?.step ?? 0,
      msg,
      phase,
      loss: last?.loss ?? null,
      toks_per_s: last?.toks_per_s ?? null,
      lr: last?.lr ?? null,
      grad_norm: last?.grad_norm ?? null,
      gpu_mem_bytes: last?.gpu_mem_bytes ?? 0,
    };
    this.beats.push(b);
    return b;
  }

  metrics(m: StepMetrics): void {
    this.rows.push(metricsCsvRow(m, null));
  }

  evaluation(e: EvalMetrics): void {
    this.rows.push(metricsCsvRow(null, e));
  }

  heartbeatsJsonl(): string {
    return this.beats.map((b) => JSON.stringify(b) + '\n').join('');
  }

  metricsCsv(): string {
    return [METRICS_HEADER, ...this.rows].join('\n') + '\n';
  }
}
