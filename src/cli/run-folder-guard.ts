// Node: where `npm run train` may write and with whom. A run name is one folder name inside --out
// (`--run ../../x` is refused, naming --run); the folder is locked for its one writer
// (./run-lock.ts) before anything in it is written; the temporary files of writes interrupted by
// a kill are removed when the next writer takes the lock; a folder killed before its first
// checkpoint (only the files a starting run writes, no checkpoint) is reused by a new run of the
// same name, since nothing in it can be resumed.
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

import { CHECKPOINT_FILE, RUN_SOURCE_FILE, RunFolder } from '../train/checkpoint/run-files';
import { acquireRunLock, describeHolder, LOCK_FILE, removeInterruptedWrites, type RunLock } from './run-lock';
import { escapeControl } from './terminal-text';
import { UsageError } from './usage';

/** The files a new run writes before its first checkpoint (and the lock's): a folder of only these can be reused. */
const STARTUP_FILES = new Set(['heartbeat.jsonl', 'metrics.csv', RUN_SOURCE_FILE, LOCK_FILE, `${LOCK_FILE}.takeover`]);

/** out/name, refused (naming --run) unless name is one folder name directly inside out. */
export function runFolderPath(out: string, name: string): string {
  const bad =
    name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\\') || name.includes('\0')
      ? 'must be one folder name (no /, \\, . or ..)'
      : null;
  const dir = join(out, name);
  const inside = resolve(dir).startsWith(resolve(out) + sep);
  if (bad || !inside)
    throw new UsageError(
      `--run ${escapeControl(name)}: ${bad ?? 'leaves --out'}; the run folder is --out/NAME (--out ${escapeControl(out)})`,
      {
        flag: 'run',
        value: name,
      },
    );
  return dir;
}

/** Takes DIR's lock (saying so when it replaced a stale one) and removes the temporary files of interrupted writes. */
export function lockRunFolder(dir: string, command: string, log: (line: string) => void = (l) => console.error(l)): RunLock {
  const lock = acquireRunLock(dir, command);
  if (lock.tookOver)
    log(
      `[lock] took over ${lock.path}: its holder (${describeHolder(lock.tookOver)}) is no longer running (killed before it could release it)`,
    );
  for (const f of removeInterruptedWrites(dir)) log(`[lock] removed ${f}, the temporary file of a write that was interrupted`);
  return lock;
}

/** Why DIR, an existing folder, cannot be reused for a new run (null when it can: killed before its first checkpoint). */
export function notReusable(dir: string): string | null {
  if (!statSync(dir).isDirectory()) return 'is not a folder';
  const names = readdirSync(dir);
  if (names.includes(CHECKPOINT_FILE)) return `holds a checkpoint: continue it with --resume ${dir}`;
  const foreign = names.filter((n) => !STARTUP_FILES.has(n) && !/^\..+\.tmp-\d+$/.test(n));
  if (foreign.length)
    return `holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''}, not only a new run's start-up files`;
  return null;
}

/**
 * A new run's folder: created and locked; or, where DIR exists and was killed before its first
 * checkpoint, locked (refused while its writer lives), emptied of its start-up files and reused.
 * Call it before any GPU work: it is where a second writer is refused.
 */
export function prepareNewRunFolder(dir: string, runName: string): { reused: boolean; open: () => RunFolder } {
  if (!existsSync(dir)) {
    return {
      reused: false,
      open: () => {
        let folder: RunFolder;
        try {
          folder = RunFolder.create(dir);
        } catch (e) {
          // Another run of the same name created it since the check above (both started at once).
          if (existsSync(dir))
            throw new UsageError(`${dir} was created by another run started at the same time: name a new run with --run NAME`, {
              flag: 'run',
              value: runName,
              cause: e,
            });
          throw e;
        }
        lockRunFolder(dir, 'train');
        return folder;
      },
    };
  }
  const why = notReusable(dir);
  if (why)
    throw new UsageError(
      existsSync(join(dir, CHECKPOINT_FILE))
        ? `${dir} already exists: continue it with --resume ${dir}, or name a new run with --run NAME`
        : `${dir} already exists and ${why}: name a new run with --run NAME`,
      { flag: 'run', value: runName },
    );
  lockRunFolder(dir, 'train');
  console.error(`[run] reusing ${dir}: it was stopped before its first checkpoint, so nothing in it can be resumed`);
  return {
    reused: true,
    open: () => {
      writeFileSync(join(dir, 'heartbeat.jsonl'), '');
      return RunFolder.resume(dir, []);
    },
  };
}
