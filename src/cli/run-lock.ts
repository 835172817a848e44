// Node: one writer per run folder. `npm run train` takes DIR/run.lock (its PID, host and start
// time) with an exclusive create (O_EXCL: of two processes, exactly one creates it) before it writes
// anything in the folder, and removes it on every exit (a normal end, an error, a signal, the stall
// watchdog: process 'exit' handlers run on every process.exit). A second writer is refused, naming
// the holder. A lock left by a process that died without its handlers (SIGKILL, a power cut) on this
// host is taken over, and said so; one from another host cannot be checked and is refused, with the
// file to delete once that process is known to be gone.
import { closeSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { UsageError } from './usage';

export const LOCK_FILE = 'run.lock';
/** Taken (exclusively) by the one process replacing a stale lock, so two never both take it over. */
const TAKEOVER_FILE = 'run.lock.takeover';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the holder took the lock. */
  startedAt: string;
  /** What the holder was doing ('train', 'train --resume'). */
  command: string;
}

/** Another process holds the run folder's lock (exit 2, before any GPU work). */
export class RunLockedError extends UsageError {
  override readonly name = 'RunLockedError';
  constructor(
    readonly lockPath: string,
    readonly holder: LockHolder | null,
    why: string,
  ) {
    super(why, { flag: 'resume' });
  }
}

export interface RunLock {
  readonly path: string;
  /** The stale lock that was replaced, when one was. */
  readonly tookOver: LockHolder | null;
  /** Removes the lock if it is still this process's (idempotent). */
  release(): void;
}

export function describeHolder(h: LockHolder): string {
  return `PID ${h.pid} on ${h.host}, ${h.command}, since ${h.startedAt}`;
}

function readHolder(path: string): LockHolder | null {
  try {
    const raw = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof raw.pid === 'number' && Number.isSafeInteger(raw.pid) && raw.pid > 0 && typeof raw.host === 'string')
      return { pid: raw.pid, host: raw.host, startedAt: String(raw.startedAt), command: String(raw.command) };
  } catch {
    // unreadable or torn (a holder killed between create and write): treated as unknown below
  }
  return null;
}

/**
 * Whether process `pid` exists on this host (EPERM: it exists, owned by someone else) and is not a
 * zombie: a killed writer whose parent has not reaped it yet (in a container without an init, never)
 * still answers kill(pid, 0) but holds nothing.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    if (exitedState(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return false;
  } catch {
    // no /proc (macOS) or gone meanwhile: kill(pid, 0) answered
  }
  return true;
}

/** Whether a /proc/<pid>/stat line is a zombie's or a dead process's (state Z or X after the name). */
export function exitedState(stat: string): boolean {
  const close = stat.lastIndexOf(')'); // the name, in parentheses, may hold ')' and spaces itself
  const state = stat.slice(close + 2, close + 3);
  return state === 'Z' || state === 'X';
}

function createExclusive(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Takes DIR's lock for this process, or throws RunLockedError naming the holder. A stale lock (its
 * process gone, same host) is replaced under run.lock.takeover, itself taken exclusively, so of
 * several processes finding the same stale lock one takes it and the others are refused.
 */
export function acquireRunLock(dir: string, command: string, onExit: (f: () => void) => void = (f) => process.on('exit', f)): RunLock {
  const path = join(dir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), command };
  const text = JSON.stringify(me) + '\n';
  let tookOver: LockHolder | null = null;
  if (!createExclusive(path, text)) {
    const holder = readHolder(path);
    const refuse = (why: string) => new RunLockedError(path, holder, why);
    if (!holder)
      throw refuse(
        `${dir} is locked by ${path}, which names no holder (a process killed while taking it?); if no other npm run train is writing this run, delete ${path} and try again`,
      );
    if (holder.host !== me.host)
      throw refuse(
        `${dir} is being written by ${describeHolder(holder)} (${path}); it cannot be checked from ${me.host}: if that process is gone, delete ${path} and try again`,
      );
    if (holder.pid === process.pid || processAlive(holder.pid))
      throw refuse(
        `${dir} is being written by ${describeHolder(holder)} (${path}); one writer per run folder: wait for it to finish or stop it first (if PID ${holder.pid} is not a training process, its PID was reused: delete ${path})`,
      );
    const takeover = join(dir, TAKEOVER_FILE);
    if (!createExclusive(takeover, text)) {
      const other = readHolder(takeover);
      if (other && !processAlive(other.pid)) removeQuietly(takeover); // a taker that died: the next try can take over
      throw refuse(
        `${dir}: another process is taking over the stale lock ${path} (${other ? describeHolder(other) : 'unknown'}); try again`,
      );
    }
    try {
      // Still the same stale holder (not replaced while we looked)? Then replace it.
      const again = readHolder(path);
      if (!again || again.pid !== holder.pid || again.startedAt !== holder.startedAt)
        throw refuse(`${dir}: the lock ${path} changed while taking over a stale one; try again`);
      unlinkSync(path);
      if (!createExclusive(path, text)) throw refuse(`${dir}: another process took the lock ${path} first; try again`);
      tookOver = holder;
    } finally {
      removeQuietly(takeover);
    }
  }
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    const now = readHolder(path);
    if (now && now.pid === me.pid && now.startedAt === me.startedAt) removeQuietly(path);
  };
  onExit(release);
  return { path, tookOver, release };
}

/** The temporary files interrupted atomic writes leave (.<name>.tmp-<pid>, src/train/checkpoint/run-files.ts). */
export function interruptedWrites(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /^\..+\.tmp-\d+$/.test(n)).map((n) => join(dir, n));
}

/** Removes the temporary files of interrupted writes (call it holding the lock: no live writer has one open). */
export function removeInterruptedWrites(dir: string): string[] {
  const found = interruptedWrites(dir);
  for (const f of found) removeQuietly(f);
  return found;
}

/** Removes this process's own temporary files in DIR (a write that failed half way). */
export function removeOwnInterruptedWrites(dir: string): string[] {
  const mine = interruptedWrites(dir).filter((f) => f.endsWith(`.tmp-${process.pid}`));
  for (const f of mine) removeQuietly(f);
  return mine;
}
