// The console guard's verdict (e2e/test.ts runs it after every test), kept free of Playwright so
// tests/e2e-guard.test.ts can check it on planted lists.

/** Whether a recorded error matches a declared pattern (String.search: a /g flag changes nothing). */
export function matchesError(pattern: RegExp, error: string): boolean {
  return error.search(pattern) !== -1;
}

/** The lines of `errors`, each once, with a count where it repeats. */
export function countedLines(errors: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const e of errors) counts.set(e, (counts.get(e) ?? 0) + 1);
  return [...counts].map(([e, n]) => (n > 1 ? `${e} (×${n})` : e));
}

/**
 * Why a test fails the guard (empty: it passes): every recorded error must match a declared
 * pattern, and, once the test body has passed, every declared pattern must have matched an error
 * (an allowance that no longer happens is removed, not kept). A test that already failed is not
 * also blamed for the declared errors it never reached.
 */
export function guardFailures(recorded: readonly string[], declared: readonly RegExp[], bodyPassed: boolean): string[] {
  const failures: string[] = [];
  const unexpected = recorded.filter((e) => !declared.some((p) => matchesError(p, e)));
  if (unexpected.length > 0)
    failures.push(
      `${unexpected.length} console/page/HTTP error(s) the test did not declare:\n` +
        countedLines(unexpected)
          .map((l) => `  - ${l}`)
          .join('\n'),
    );
  const stale = bodyPassed ? declared.filter((p) => !recorded.some((e) => matchesError(p, e))) : [];
  if (stale.length > 0)
    failures.push(
      `declared with expectConsoleErrors() but never recorded (remove the stale allowance):\n` +
        stale.map((p) => `  - ${String(p)}`).join('\n'),
    );
  return failures;
}
