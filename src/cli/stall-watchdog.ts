// The train CLI's stall watchdog. The training loop's heartbeats are stamped into shared memory.
// Two observers read them:
// - the main thread's own 1 s timer, which reports a stall while the event loop runs (a GPU wait
//   that never completes) and lets the caller exit cleanly (exit 3);
// - a worker thread, for when the event loop itself is blocked (a long synchronous call such as a
//   pipeline compile, a runaway loop): no timer of the main thread can fire then, so the worker
//   writes the message and the heartbeat line itself and kills the process (SIGKILL, exit 137).
// Both give the same message: the phase and step of the last heartbeat and the flag to raise.
import { Worker } from 'node:worker_threads';

import type { TrainerPhase } from '../train/types';

const PHASES: readonly TrainerPhase[] = ['init', 'data', 'step', 'eval', 'idle', 'paused', 'done', 'error'];

/** Shared slots (BigInt64, for Atomics): last heartbeat time, main loop's last tick, phase, step. */
const BEAT_AT = 0;
const LOOP_AT = 1;
const PHASE = 2;
const STEP = 3;

/** How long the main loop may go without a tick before the worker takes over (its timer ticks every second). */
export const LOOP_BLOCKED_MS = 3000;

export interface StallWatchdogOptions {
  /** Seconds without a heartbeat that make a stall. */
  seconds: number;
  /** heartbeat.jsonl: the worker appends the stall's line when the main thread cannot. */
  heartbeatFile: string;
  /** The stall message, with {age} (seconds since the last heartbeat), {phase} and {step} filled in. */
  template: string;
  /** Main thread, event loop alive: report and exit. */
  onStall: (message: string, phase: TrainerPhase, step: number) => void;
}

// Plain JavaScript run by the worker (eval: no loader, no TypeScript there).
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { appendFileSync, writeSync } = require('node:fs');
const { shared, seconds, heartbeatFile, template, phases, loopBlockedMs } = workerData;
const slots = new BigInt64Array(shared);
setInterval(() => {
  const now = Date.now();
  const age = now - Number(Atomics.load(slots, ${BEAT_AT}));
  const loopAge = now - Number(Atomics.load(slots, ${LOOP_AT}));
  if (age <= seconds * 1000 || loopAge <= loopBlockedMs) return;
  const phase = phases[Number(Atomics.load(slots, ${PHASE}))] ?? 'init';
  const step = Number(Atomics.load(slots, ${STEP}));
  const msg = template.replace('{age}', (age / 1000).toFixed(0)).replace('{phase}', phase).replace('{step}', String(step)) +
    ' (the main thread has been blocked for ' + (loopAge / 1000).toFixed(0) + ' s)';
  try { writeSync(2, msg + '\\n'); } catch {}
  try {
    appendFileSync(heartbeatFile, JSON.stringify({ ts: now, iso: new Date(now).toISOString(), step, msg, phase: 'error',
      loss: null, toks_per_s: null, lr: null, grad_norm: null, gpu_mem_bytes: 0 }) + '\\n');
  } catch {}
  process.kill(process.pid, 'SIGKILL');
}, 500);
`;

export class StallWatchdog {
  private readonly slots: BigInt64Array;
  private readonly timer: NodeJS.Timeout;
  private readonly worker: Worker;

  constructor(private readonly o: StallWatchdogOptions) {
    if (!(o.seconds > 0)) throw new Error(`stall watchdog: seconds must be > 0 (got ${o.seconds})`);
    this.slots = new BigInt64Array(new SharedArrayBuffer(4 * BigInt64Array.BYTES_PER_ELEMENT));
    const now = BigInt(Date.now());
    Atomics.store(this.slots, BEAT_AT, now);
    Atomics.store(this.slots, LOOP_AT, now);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        shared: this.slots.buffer,
        seconds: o.seconds,
        heartbeatFile: o.heartbeatFile,
        template: o.template,
        phases: PHASES,
        loopBlockedMs: LOOP_BLOCKED_MS,
      },
    });
    this.worker.unref();
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /** A heartbeat: the loop is alive in this phase at this step. */
  beat(phase: TrainerPhase, step: number): void {
    Atomics.store(this.slots, BEAT_AT, BigInt(Date.now()));
    Atomics.store(this.slots, PHASE, BigInt(Math.max(0, PHASES.indexOf(phase))));
    Atomics.store(this.slots, STEP, BigInt(step));
  }

  stop(): void {
    clearInterval(this.timer);
    void this.worker.terminate();
  }

  private tick(): void {
    const now = Date.now();
    Atomics.store(this.slots, LOOP_AT, BigInt(now));
    const age = (now - Number(Atomics.load(this.slots, BEAT_AT))) / 1000;
    if (age <= this.o.seconds) return;
    const phase = PHASES[Number(Atomics.load(this.slots, PHASE))] ?? 'init';
    const step = Number(Atomics.load(this.slots, STEP));
    this.o.onStall(fillStallTemplate(this.o.template, age, phase, step), phase, step);
  }
}

/** The template with its fields filled in, as the worker fills them. */
export function fillStallTemplate(template: string, ageSeconds: number, phase: string, step: number): string {
  return template.replace('{age}', ageSeconds.toFixed(0)).replace('{phase}', phase).replace('{step}', String(step));
}
