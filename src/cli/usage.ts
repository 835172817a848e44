// User errors of the CLIs: a UsageError is printed as its message alone and exits 2 (runMain in
// ./main, runGenerateCli), unlike a failure, which exits 1.

export interface UsageErrorFields {
  /** The flag at fault, without its dashes ('steps', 'set', 'preset'); absent when no single flag is. */
  flag?: string;
  /** The value given to it, when it had one. */
  value?: string;
  /** What the error was made from (asUsage). */
  cause?: unknown;
}

export class UsageError extends Error {
  override readonly name: string = 'UsageError';
  /** The flag at fault, without its dashes; undefined when no single flag is (e.g. a stray argument). */
  readonly flag: string | undefined;
  /** The value the flag was given, when it had one. */
  readonly value: string | undefined;

  constructor(message: string, fields: UsageErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.flag = fields.flag;
    this.value = fields.value;
  }
}

/** Runs a flag parser, turning its errors into usage errors (a UsageError passes through unchanged). */
export function asUsage<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(e instanceof Error ? e.message : String(e), { cause: e });
  }
}
