// User errors of the CLIs: a UsageError is printed as its message alone and exits 2 (runMain in
// ./main, runGenerateCli), unlike a failure, which exits 1.
import type { ParsedArgs } from './args';

export class UsageError extends Error {}

/** Runs a flag parser, turning its errors into usage errors. */
export function asUsage<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** Throws a UsageError naming every flag (and --set) outside `known`, followed by the usage text. */
export function rejectUnknownFlags(args: ParsedArgs, known: readonly string[], usage: string): void {
  const unknown = [...args.flags.keys()].filter((k) => !known.includes(k));
  if (args.sets.length && !known.includes('set')) unknown.push('set');
  if (unknown.length) throw new UsageError(`unknown flag${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `--${u}`).join(', ')}\n${usage}`);
}
