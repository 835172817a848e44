// Which failures the page recovers from by itself, and what it says (src/ui/recovery/recovery-policy.ts).
import { describe, expect, it } from 'vitest';

import { recoverableCause, type RecoveryNote, recoveryText } from '../../src/ui/recovery/recovery-policy';
import { WorkerCrashedError } from '../../src/worker/client';
import { GpuHangError } from '../../src/worker/gpu-hang';
import { GpuFailureError } from '../../src/worker/session';

/** As an error arrives through comlink: a plain Error with the worker's name and message. */
function fromWorker(e: Error): Error {
  return Object.assign(new Error(e.message), { name: e.name });
}

describe('recoverableCause', () => {
  it('recovers a lost device, a hung GPU and a crashed worker; not a terminated one or other errors', () => {
    expect(recoverableCause(fromWorker(new GpuFailureError({ kind: 'device-lost', message: 'GPU device lost (destroyed)' })))).toBe(
      'device-lost',
    );
    expect(recoverableCause(fromWorker(new GpuHangError(120_000)))).toBe('gpu-hung');
    expect(recoverableCause(new WorkerCrashedError('failed', 'boom'))).toBe('worker-crashed');
    expect(recoverableCause(new WorkerCrashedError('terminated'))).toBeNull();
    expect(recoverableCause(fromWorker(new GpuFailureError({ kind: 'validation', message: 'bad binding' })))).toBeNull();
    expect(recoverableCause(new Error('Non-finite loss at step 3'))).toBeNull();
    expect(recoverableCause('device lost')).toBeNull();
  });
});

describe('recoveryText', () => {
  const note: RecoveryNote = { state: 'recovered', cause: 'device-lost', detail: '', lostAtStep: 57, resumedAtStep: 50 };
  it('says what happened and where the run went on from', () => {
    expect(recoveryText(note)).toBe(
      'The GPU device was lost at step 57. The worker was restarted and the run continued from its last autosave at step 50 (7 steps trained again).',
    );
    expect(recoveryText({ ...note, resumedAtStep: 0 })).toMatch(/had no autosave yet, so it started again from step 0/);
    expect(recoveryText({ ...note, state: 'recovering', cause: 'stalled' })).toMatch(
      /^The trainer stopped responding at step 57\. Restarting/,
    );
    expect(recoveryText({ ...note, state: 'failed', failure: 'no WebGPU device' })).toMatch(/recovering failed: no WebGPU device$/);
  });
});
