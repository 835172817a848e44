// The UsageError a CLI's flag check throws (src/cli/usage.ts), for tests that read its message,
// flag and value; fails the test if `f` returns or throws anything else.
import { expect } from 'vitest';

import { UsageError } from '../../src/cli/usage';

export function usageError(f: () => unknown): UsageError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return e as UsageError;
  }
  throw new Error('expected a UsageError');
}
