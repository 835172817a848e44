// RunLog: the page's downloads use the CLI's formats (heartbeat.jsonl fields, metrics.csv header
// and rows from src/train/checkpoint/run-files.ts), in the order things happened.
import { describe, expect, it } from 'vitest';

import { METRICS_HEADER, metricsCsvRow } from '../../src/train/metrics-csv';
import type { Heartbeat, StepMetrics } from '../../src/train/types';
import { RunLog } from '../../src/worker/run-log';

/** The fields of a heartbeat.jsonl line written by the CLI (src/train/types.ts Heartbeat). */
const CLI_FIELDS = ['ts', 'iso', 'step', 'msg', 'phase', 'loss', 'toks_per_s', 'lr', 'grad_norm', 'gpu_mem_bytes'];

function beat(step: number, phase: Heartbeat['phase'] = 'step'): Heartbeat {
  return {
    ts: 1000 + step,
    iso: new Date(1000 + step).toISOString(),
    step,
    msg: `step ${step}`,
    phase,
    loss: 5 - step,
    toks_per_s: 100,
    lr: 1e-3,
    grad_norm: 0.5,
    gpu_mem_bytes: 4096,
  };
}

function metrics(step: number): StepMetrics {
  return { step, loss: 5 - step / 8, lr: 0.001, gradNorm: 0.25, tokensPerSecond: 512, stepMs: 20, elapsedMs: 20 * (step + 1) };
}

describe('RunLog', () => {
  it('writes every heartbeat as one JSON line with exactly the CLI fields', () => {
    const log = new RunLog();
    log.heartbeat(beat(0, 'init'));
    log.heartbeat(beat(1));
    const marked = log.mark('paused', 'paused after 2 steps', 5000);
    const lines = log.heartbeatsJsonl().split('\n');
    expect(lines.at(-1)).toBe(''); // newline-terminated
    const parsed = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toHaveLength(3);
    for (const p of parsed) expect(Object.keys(p)).toEqual(CLI_FIELDS);
    // A mark keeps the last beat's numbers under a new phase, message and time.
    expect(parsed[2]).toEqual({ ...beat(1), ts: 5000, iso: new Date(5000).toISOString(), phase: 'paused', msg: 'paused after 2 steps' });
    expect(marked).toEqual(parsed[2]);
    expect(log.lastHeartbeat).toEqual(marked);
  });

  it('a mark with no beat before it has null numbers and step 0', () => {
    const b = new RunLog().mark('done', 'x', 1);
    expect([b.step, b.loss, b.toks_per_s, b.lr, b.grad_norm, b.gpu_mem_bytes]).toEqual([0, null, null, null, null, 0]);
  });

  it('writes metrics.csv with the CLI header, a row per step and per evaluation, in order', () => {
    const log = new RunLog();
    log.metrics(metrics(0));
    log.metrics(metrics(1));
    log.evaluation({ step: 2, valLoss: 4.25 });
    log.metrics(metrics(2));
    const lines = log.metricsCsv().split('\n');
    expect(lines[0]).toBe(METRICS_HEADER);
    expect(lines.slice(1)).toEqual([
      '0,5,,0.001,0.25,512,20,20,,,,,',
      '1,4.875,,0.001,0.25,512,20,40,,,,,',
      '2,,4.25,,,,,,,,,,',
      '2,4.75,,0.001,0.25,512,20,60,,,,,',
      '',
    ]);
    const cols = METRICS_HEADER.split(',').length;
    for (const l of lines.slice(1, -1)) expect(l.split(',')).toHaveLength(cols);
  });
});
