// The e2e specs' `test` and `expect`. Every spec imports them from here, never from
// '@playwright/test' (tests/e2e-guard.test.ts checks), so no test can forget the error check
// (issue 13): no console error, uncaught page error or failed HTTP response during the whole suite.
//
// The console guard watches every browser context of the worker's browser: those of the `context`
// and `page` fixtures and those a spec opens with browser.newContext() / browser.newPage() (both
// are wrapped for the worker's lifetime, so pages opened in a beforeAll hook count too). It listens
// on the context, so every page of it counts (popups and later tabs included), and records:
//   - `pageerror: <message>`: an uncaught exception or unhandled rejection ('weberror'),
//   - `console: <text> (<url>)`: a console message of type 'error' from a page or one of its
//     workers ('console'; Chromium's own "Failed to load resource" lines are among them),
//   - `HTTP <status>: <url>`: a response with status ≥ 400 ('response').
// After each test it fails the test, listing each error, unless the test declared the error with
// expectConsoleErrors(); a declared pattern that never matched fails it too. Errors recorded
// outside a test (a beforeAll hook, the tail of the previous test) go to the next test, marked so;
// those after a worker's last test (an afterAll hook) fail the worker's teardown.
import { type Browser, type BrowserContext, test as base, type TestInfo } from '@playwright/test';

import { guardFailures } from './console-guard';

export type { Browser, BrowserContext, Download, Locator, Page, TestInfo } from '@playwright/test';
export { expect } from '@playwright/test';

/** The errors of one worker's browser, into the running test's list (or `outside` between tests). */
class ErrorLog {
  private current: string[] | null = null;
  private outside: string[] = [];
  private readonly watched = new WeakSet<BrowserContext>();

  private record(error: string): void {
    (this.current ?? this.outside).push(error);
  }

  watch(context: BrowserContext): void {
    if (this.watched.has(context)) return;
    this.watched.add(context);
    context.on('weberror', (e) => this.record(`pageerror: ${e.error().message}`));
    context.on('console', (m) => {
      if (m.type() === 'error') this.record(`console: ${m.text()} (${m.location().url})`);
    });
    context.on('response', (r) => {
      if (r.status() >= 400) this.record(`HTTP ${r.status()}: ${r.url()}`);
    });
  }

  /** The errors recorded outside a test since the last call. */
  takeOutside(): string[] {
    const taken = this.outside;
    this.outside = [];
    return taken;
  }

  startTest(): string[] {
    this.current = [];
    return this.current;
  }

  endTest(): void {
    this.current = null;
  }
}

/** Wraps browser.newContext/newPage so each new context is watched; returns the undo. */
function watchNewContexts(browser: Browser, log: ErrorLog): () => void {
  const saved = (['newContext', 'newPage'] as const).map((k) => [k, Object.getOwnPropertyDescriptor(browser, k)] as const);
  const { newContext, newPage } = browser;
  browser.newContext = async (...args: Parameters<Browser['newContext']>) => {
    const context = await newContext.apply(browser, args);
    log.watch(context);
    return context;
  };
  // newPage opens its context through newContext (watched before the page exists); this is a backstop.
  browser.newPage = async (...args: Parameters<Browser['newPage']>) => {
    const page = await newPage.apply(browser, args);
    log.watch(page.context());
    return page;
  };
  return () => {
    for (const [k, descriptor] of saved)
      if (descriptor) Object.defineProperty(browser, k, descriptor);
      else Reflect.deleteProperty(browser, k);
  };
}

/** The patterns each running test declared, by test id. */
const declaredByTest = new Map<string, RegExp[]>();

/**
 * Declares errors this test provokes on purpose: each recorded error must match one of the
 * declared patterns (matched against the guard's lines, e.g. /^console: WebGPU device lost/), and
 * each pattern must match at least one recorded error, else the test fails.
 */
export function expectConsoleErrors(testInfo: TestInfo, patterns: RegExp[]): void {
  const declared = declaredByTest.get(testInfo.testId);
  if (!declared) throw new Error('expectConsoleErrors() must be called inside a test of e2e/test.ts');
  declared.push(...patterns);
  for (const p of patterns) testInfo.annotations.push({ type: 'expected console error', description: String(p) });
}

export const test = base.extend<{ _consoleGuard: void }, { _consoleLog: ErrorLog }>({
  _consoleLog: [
    async ({ browser }, use) => {
      const log = new ErrorLog();
      for (const context of browser.contexts()) log.watch(context);
      const restore = watchNewContexts(browser, log);
      await use(log);
      restore();
      const left = log.takeOutside();
      if (left.length > 0)
        throw new Error(
          `Console guard (e2e/test.ts): errors after the worker's last test (an afterAll hook?):\n${left.map((e) => `  - ${e}`).join('\n')}`,
        );
    },
    { scope: 'worker', auto: true, box: true, title: 'console guard (worker)' },
  ],
  _consoleGuard: [
    async ({ _consoleLog: log, browser }, use, testInfo) => {
      for (const context of browser.contexts()) log.watch(context); // opened some other way: watched from now on
      const before = log.takeOutside().map((e) => `${e} [recorded before this test: a beforeAll hook or the previous test's tail]`);
      const declared: RegExp[] = [];
      declaredByTest.set(testInfo.testId, declared);
      const during = log.startTest();
      try {
        await use();
      } finally {
        log.endTest();
        declaredByTest.delete(testInfo.testId);
      }
      const failures = guardFailures([...before, ...during], declared, testInfo.status === 'passed');
      if (failures.length > 0)
        throw new Error(
          `Console guard (e2e/test.ts): ${failures.join('\n')}\n` +
            'Fix the error, or, where provoking it is the point of the test, declare it with expectConsoleErrors(testInfo, [/pattern/]).',
        );
    },
    { auto: true, box: true, title: 'console guard' },
  ],
});
