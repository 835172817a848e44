// Node: a write to the run folder that the disk refuses (full, read-only, no permission, the folder
// deleted) becomes a DiskWriteError naming the file and what was being written; `npm run train`
// prints it with the last good checkpoint that remains and exits DISK_ERROR_EXIT.
import { existsSync } from 'node:fs';

/** train's exit code for a write the disk refused. */
export const DISK_ERROR_EXIT = 5;

const WHY: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'the folder no longer exists (deleted while the run was writing?)',
  ENOTDIR: 'a folder on the path is not a folder',
  EIO: 'an input/output error on the disk',
  EFBIG: 'the file is too large for this file system',
};

export class DiskWriteError extends Error {
  override readonly name = 'DiskWriteError';
  constructor(
    readonly file: string,
    /** What was being written ('checkpoint at step 40', 'metrics.csv row'). */
    readonly what: string,
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(`cannot write ${file} (${what}): ${code}, ${WHY[code] ?? 'the write failed'}`, options);
  }
}

/** Runs a write; an errno error from the disk comes back as a DiskWriteError naming `file` and `what`. */
export function guardWrite<T>(file: string, what: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) throw new DiskWriteError(file, what, code, { cause: e });
    throw e;
  }
}

/** Where a run stands after a failed write: which checkpoint remains for --resume. */
export function lastGoodCheckpoint(dir: string, checkpointPath: string, step: number | null): string {
  if (step === null || !existsSync(checkpointPath))
    return `No checkpoint of this run remains${existsSync(dir) ? ` in ${dir}` : ` (${dir} is gone)`}: nothing to resume.`;
  return `The last good checkpoint is ${checkpointPath} (step ${step}): once the disk is fixed, npm run train -- --resume ${dir}`;
}

/** The run folder being written and the step of the checkpoint it holds (null: none yet), for the message. */
export const runOnDisk: { dir: string | null; checkpointPath: string | null; step: number | null } = {
  dir: null,
  checkpointPath: null,
  step: null,
};

/**
 * Runs train's main; a DiskWriteError becomes its message, this process's temporary file removed,
 * the last good checkpoint named, and exit DISK_ERROR_EXIT.
 */
export async function withDiskErrors(main: () => Promise<number>, removeOwnTemp: (dir: string) => string[]): Promise<number> {
  try {
    return await main();
  } catch (e) {
    if (!(e instanceof DiskWriteError)) throw e;
    const { dir, checkpointPath, step } = runOnDisk;
    const removed = dir ? removeOwnTemp(dir) : [];
    console.error(
      `error: ${e.message}` +
        (removed.length ? `\nremoved the unfinished ${removed.join(', ')}` : '') +
        (dir && checkpointPath ? `\n${lastGoodCheckpoint(dir, checkpointPath, step)}` : '') +
        `\n(exit ${DISK_ERROR_EXIT}: a write to the run folder failed)`,
    );
    return DISK_ERROR_EXIT;
  }
}
