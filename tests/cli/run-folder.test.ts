// Issue 22, items 4 and 8, in process: the run folder's lock (taken exclusively, refused naming a
// live holder, a dead holder's lock taken over, released only by its owner), run names confined to
// --out, a folder stopped before its first checkpoint reusable, disk errors named with the file and
// the last good checkpoint, control characters escaped.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it, vi } from 'vitest';

import { DISK_ERROR_EXIT, DiskWriteError, guardWrite, lastGoodCheckpoint, runOnDisk, withDiskErrors } from '../../src/cli/disk-errors';
import { notReusable, runFolderPath } from '../../src/cli/run-folder-guard';
import { acquireRunLock, exitedState, LOCK_FILE, processAlive, removeInterruptedWrites, RunLockedError } from '../../src/cli/run-lock';
import { escapeControl } from '../../src/cli/terminal-text';
import { UsageError } from '../../src/cli/usage';

const root = mkdtempSync(join(tmpdir(), 'nsa-run-folder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const folder = () => {
  const d = join(root, `f${n++}`);
  mkdirSync(d);
  return d;
};
/** A PID no process has: above Linux's pid_max ceiling (2^22). */
const DEAD_PID = 2 ** 22 + 17;
const noExit = () => {};

describe('run lock', () => {
  it('is taken exclusively with PID, host and start time, and released by its owner only', () => {
    const dir = folder();
    const lock = acquireRunLock(dir, 'train', noExit);
    const held = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as Record<string, unknown>;
    expect([held.pid, held.host, held.command, typeof held.startedAt]).toEqual([process.pid, hostname(), 'train', 'string']);
    expect(lock.tookOver).toBeNull();
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    // A lock someone else now holds is not removed by an old owner's release.
    const again = acquireRunLock(dir, 'train', noExit);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: hostname(), startedAt: 'x', command: 'other' }));
    again.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
  });

  it('a live holder is refused, named (PID, host, start time)', () => {
    const dir = folder();
    acquireRunLock(dir, 'train', noExit);
    let err: unknown;
    try {
      acquireRunLock(dir, 'train --resume', noExit);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RunLockedError);
    expect(err).toBeInstanceOf(UsageError); // exit 2
    expect((err as Error).message).toMatch(new RegExp(`being written by PID ${process.pid} on ${hostname()}, train, since \\d{4}-`));
  });

  it('a dead holder on this host is taken over and said so; one from another host is refused', () => {
    const dir = folder();
    const stale = { pid: DEAD_PID, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'train' };
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(stale));
    const lock = acquireRunLock(dir, 'train --resume', noExit);
    expect(lock.tookOver).toEqual(stale);
    expect((JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid).toBe(process.pid);
    expect(existsSync(join(dir, `${LOCK_FILE}.takeover`))).toBe(false);
    lock.release();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...stale, host: 'elsewhere' }));
    expect(() => acquireRunLock(dir, 'train', noExit)).toThrow(/PID 4194321 on elsewhere.*cannot be checked from .*delete .*run\.lock/);
    writeFileSync(join(dir, LOCK_FILE), 'torn');
    expect(() => acquireRunLock(dir, 'train', noExit)).toThrow(/names no holder/);
  });

  it('is released on exit: the handler it registers removes it', () => {
    const dir = folder();
    const handlers: Array<() => void> = [];
    acquireRunLock(dir, 'train', (f) => handlers.push(f));
    expect(handlers).toHaveLength(1);
    handlers[0]();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('temporary files of interrupted writes are removed, nothing else', () => {
    const dir = folder();
    for (const f of ['.checkpoint.safetensors.tmp-123', '.metrics.csv.tmp-9', 'metrics.csv', '.hidden']) writeFileSync(join(dir, f), 'x');
    expect(removeInterruptedWrites(dir).sort()).toEqual([join(dir, '.checkpoint.safetensors.tmp-123'), join(dir, '.metrics.csv.tmp-9')]);
    expect(existsSync(join(dir, 'metrics.csv')) && existsSync(join(dir, '.hidden'))).toBe(true);
  });
});

describe('run names and folders', () => {
  it('--run is one folder name inside --out; anything else is refused naming --run', () => {
    expect(runFolderPath('runs', 'a-1')).toBe(join('runs', 'a-1'));
    for (const bad of ['../../x', '..', '.', '', 'a/b', '/etc', 'a\\b'])
      expect(() => runFolderPath('runs', bad), bad).toThrow(
        expect.objectContaining({ flag: 'run', message: expect.stringMatching(/^--run .*: must be one folder name/) as unknown }),
      );
  });

  it('a folder of only start-up files is reusable; one with a checkpoint or other files is not', () => {
    const dir = folder();
    for (const f of ['heartbeat.jsonl', 'metrics.csv', 'run-source.json', LOCK_FILE, '.metrics.csv.tmp-5']) writeFileSync(join(dir, f), '');
    expect(notReusable(dir)).toBeNull();
    writeFileSync(join(dir, 'notes.txt'), '');
    expect(notReusable(dir)).toMatch(/holds notes\.txt/);
    writeFileSync(join(dir, 'checkpoint.safetensors'), '');
    expect(notReusable(dir)).toMatch(/holds a checkpoint: continue it with --resume/);
  });
});

describe('disk errors', () => {
  it('ENOSPC (a write to /dev/full) is a DiskWriteError naming the file and what was written', () => {
    let err: unknown;
    try {
      guardWrite('/dev/full', 'checkpoint at step 7 (interval)', () => writeFileSync('/dev/full', 'x'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DiskWriteError);
    expect((err as Error).message).toBe('cannot write /dev/full (checkpoint at step 7 (interval)): ENOSPC, the disk is full');
  });

  it('EROFS, EACCES and a deleted folder are named; other errors pass through', () => {
    const errno = (code: string) => () => {
      throw Object.assign(new Error(`${code}: planted`), { code });
    };
    expect(() => guardWrite('r/metrics.csv', 'metrics.csv row of step 3', errno('EROFS'))).toThrow(
      'cannot write r/metrics.csv (metrics.csv row of step 3): EROFS, the file system is read-only',
    );
    expect(() => guardWrite('r/x', 'w', errno('EACCES'))).toThrow(/EACCES, permission denied/);
    const dir = folder();
    rmSync(dir, { recursive: true });
    expect(() =>
      guardWrite(join(dir, 'heartbeat.jsonl'), 'heartbeat of step 2', () => writeFileSync(join(dir, 'heartbeat.jsonl'), '')),
    ).toThrow(/ENOENT, the folder no longer exists/);
    expect(() => guardWrite('r/x', 'w', errno('not-errno'))).toThrow('not-errno: planted');
  });

  it('train prints the error, removes its own temp file, names the last good checkpoint and exits 5', async () => {
    const dir = folder();
    const ckpt = join(dir, 'checkpoint.safetensors');
    writeFileSync(ckpt, 'x');
    const tmp = join(dir, `.checkpoint.safetensors.tmp-${process.pid}`);
    writeFileSync(tmp, 'half');
    Object.assign(runOnDisk, { dir, checkpointPath: ckpt, step: 40 });
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    const code = await withDiskErrors(
      () => Promise.reject(new DiskWriteError(ckpt, 'checkpoint at step 50 (interval)', 'ENOSPC')),
      removeInterruptedWrites,
    );
    const printed = err.mock.calls.map((c) => String(c[0])).join('\n');
    err.mockRestore();
    expect(code).toBe(DISK_ERROR_EXIT);
    expect(printed).toContain(`cannot write ${ckpt} (checkpoint at step 50 (interval)): ENOSPC, the disk is full`);
    expect(printed).toContain(`removed the unfinished ${tmp}`);
    expect(printed).toContain(`The last good checkpoint is ${ckpt} (step 40)`);
    expect(printed).toContain('(exit 5: a write to the run folder failed)');
    expect(existsSync(tmp)).toBe(false);
    expect(lastGoodCheckpoint(join(root, 'gone'), join(root, 'gone', 'c'), 3)).toMatch(
      /No checkpoint of this run remains \(.*gone is gone\)/,
    );
  });
});

describe('terminal text', () => {
  it('control characters from files are escaped', () => {
    expect(escapeControl('a\u001b[2Jb\u0007c\r\n\t\u009b\u202ed')).toBe('a\\x1b[2Jb\\x07c\\r\\n\\t\\x9b\\u202ed');
    expect(escapeControl('line 1\nline\u001b 2', { keepNewlines: true })).toBe('line 1\nline\\x1b 2');
    expect(escapeControl('naïve — ok')).toBe('naïve — ok');
  });
});

// A SIGKILLed writer that its parent has not reaped yet is a zombie: kill(pid, 0) still answers,
// but it holds nothing, so its lock is taken over (processAlive reads the state from /proc).
describe('exitedState (/proc/<pid>/stat)', () => {
  it('reads the state after the last parenthesis: Z and X have exited, R, S, D have not', () => {
    expect(exitedState('4242 (node) Z 1 4242 4242 0 -1')).toBe(true);
    expect(exitedState('4242 (node) X 1 4242')).toBe(true);
    expect(exitedState('4242 (a) b) Z (c) R 1 2')).toBe(false); // the name holds ') Z (': state R
    expect(exitedState('4242 (node) S 1 4242')).toBe(false);
    expect(exitedState('4242 (node) D 1 4242')).toBe(false);
    expect(exitedState('4242 (x) R 1')).toBe(false);
  });
  it('this process is alive; a pid past pid_max is not', () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 22 + 12345)).toBe(false); // above Linux's pid_max: no such process
  });
});
