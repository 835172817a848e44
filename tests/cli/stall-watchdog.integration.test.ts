// The train CLI's stall watchdog (src/cli/stall-watchdog.ts) in a child process: it fires while the
// main thread is blocked in a synchronous call (its own timers cannot run then), it fires through
// the main thread's timer while the event loop waits for something that never comes, and it stays
// quiet while heartbeats arrive. Each message names the phase, the step and the flag to raise.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { fillStallTemplate } from '../../src/cli/stall-watchdog';
import { tempFolders } from '../helpers/temp-dir';

const newFolder = tempFolders('nsa-stall-');

function child(mode: 'blocked' | 'waiting' | 'healthy') {
  const heartbeat = join(newFolder('stall'), 'heartbeat.jsonl');
  writeFileSync(heartbeat, '');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'tests/cli/fixtures/stall-watchdog-child.ts', mode, heartbeat], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { ...r, seconds: (performance.now() - t0) / 1000, heartbeat: readFileSync(heartbeat, 'utf8') };
}

describe('stall watchdog', () => {
  it('a blocked main thread: the worker thread reports phase, step and flag, writes the heartbeat line and kills the process', () => {
    const r = child('blocked');
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).not.toContain('not stopped');
    expect(r.stderr).toMatch(
      /STALL: no heartbeat for \d+ s \(phase 'step', step 7\); raise --stall-timeout \(now 1 s\) \(the main thread has been blocked for \d+ s\)/,
    );
    expect(r.seconds).toBeLessThan(20); // 1 s stall + 3 s blocked loop + start-up, far below the 30 s loop
    const line = JSON.parse(r.heartbeat.trim().split('\n').at(-1)!) as { phase: string; step: number; msg: string };
    expect(line).toMatchObject({ phase: 'error', step: 7 });
    expect(line.msg).toMatch(/^STALL/);
  });

  it('a live event loop waiting forever: the main thread reports it and exits 3', () => {
    const r = child('waiting');
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/STALL: no heartbeat for [12] s \(phase 'step', step 7\); raise --stall-timeout/);
    expect(r.stdout).not.toContain('not stopped');
  });

  it('heartbeats every 200 ms keep a 1 s watchdog quiet', () => {
    const r = child('healthy');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('healthy');
    expect(r.stderr).not.toContain('STALL');
  });

  it('fills the template as the worker does', () => {
    expect(fillStallTemplate('{age} s, {phase}, {step}', 12.4, 'init', 0)).toBe('12 s, init, 0');
  });
});
