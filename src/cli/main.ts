// The entry-point wrapper every CLI shares: runs its main, exits with the code it returns. A
// UsageError or InvalidConfigError it throws (the user's flags or config) prints its message and
// exits 2; no WebGPU adapter prints its message and exits 1; any other error prints (with its stack
// unless told otherwise) and exits 1. process.exit,
// so an open GPU device or a watchdog timer cannot keep the process alive.
import { InvalidConfigError } from '../definitions/config-issue';
import { CheckpointFormatError } from '../train/checkpoint/checkpoint';
import { DataFileError } from '../train/data/text-file';
import { escapeControl } from './terminal-text';
import { UsageError } from './usage';

export interface RunMainOptions {
  /** Print the stack of a thrown error (default), or only its message (for user-facing CLIs). */
  stack?: boolean;
}

export function runMain(main: () => Promise<number> | number, opts: RunMainOptions = {}): void {
  const stack = opts.stack ?? true;
  Promise.resolve()
    .then(main)
    .then(
      (code) => process.exit(code),
      (e: unknown) => {
        const usage = isUserError(e);
        // No adapter is the machine's state, not a bug: its message says what to check, no stack.
        // (By name: importing src/gpu/node-device.ts would load Dawn into every CLI module's importers.)
        const plain = usage || (e instanceof Error && e.name === 'NoAdapterError');
        // Messages quote files' contents (checkpoint metadata, config fields): control characters escaped.
        console.error(
          escapeControl(e instanceof Error ? (stack && !plain ? (e.stack ?? e.message) : e.message) : String(e), { keepNewlines: true }),
        );
        process.exit(usage ? 2 : 1);
      },
    );
}

/** The user's own mistake (a bad flag, config, checkpoint or data file): exit code 2, message only. */
export function isUserError(e: unknown): e is UsageError | InvalidConfigError | CheckpointFormatError | DataFileError {
  return e instanceof UsageError || e instanceof InvalidConfigError || e instanceof CheckpointFormatError || e instanceof DataFileError;
}
