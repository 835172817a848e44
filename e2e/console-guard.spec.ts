// The console guard of e2e/test.ts on a page served by a route (no server, no WebGPU): it records
// errors of the `page` fixture's page, its dedicated worker, a popup, a second tab of the context,
// a page from browser.newPage() and one opened in a beforeAll hook (the hook's own errors go to the
// next test); an undeclared error and a stale declaration fail the test.
import { type BrowserContext, expect, expectConsoleErrors, type Page, test } from './test';

const ORIGIN = 'http://console-guard.test';

/** Serves ORIGIN: an empty page at every path, a 404 at /missing. */
async function serve(target: Page | BrowserContext): Promise<void> {
  await target.route(`${ORIGIN}/**`, (route) =>
    new URL(route.request().url()).pathname === '/missing'
      ? route.fulfill({ status: 404, contentType: 'text/plain', body: 'missing' })
      : route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>console guard</title>' }),
  );
}

test('records page, worker, popup, second-tab and browser.newPage errors and HTTP errors', async ({ page, context, browser }, testInfo) => {
  expectConsoleErrors(testInfo, [
    /^console: from the page \(/,
    /^console: from a worker \(/,
    /^pageerror: thrown by the page$/,
    /^HTTP 404: http:\/\/console-guard\.test\/missing$/,
    /^console: Failed to load resource: .*404/,
    /^console: from a popup \(/,
    /^console: from a second tab \(/,
    /^console: from browser\.newPage \(/,
  ]);
  await serve(context);
  await page.goto(`${ORIGIN}/`);
  await page.evaluate(() => console.error('from the page'));

  const fromWorker = page.waitForEvent('console', (m) => m.text() === 'from a worker');
  await page.evaluate(() => {
    const url = URL.createObjectURL(new Blob(["console.error('from a worker');"], { type: 'text/javascript' }));
    (window as unknown as { w: Worker }).w = new Worker(url);
  });
  await fromWorker;

  const thrown = page.waitForEvent('pageerror');
  await page.evaluate(() => setTimeout(() => void Promise.reject(new Error('thrown by the page'))));
  await thrown;

  const loadFailed = page.waitForEvent('console', (m) => m.text().startsWith('Failed to load resource'));
  expect(await page.evaluate(() => fetch('/missing').then((r) => r.status))).toBe(404);
  await loadFailed;

  const [popup] = await Promise.all([context.waitForEvent('page'), page.evaluate(() => void window.open('/popup'))]);
  await popup.waitForLoadState();
  await popup.evaluate(() => console.error('from a popup'));

  const tab = await context.newPage();
  await tab.goto(`${ORIGIN}/tab`);
  await tab.evaluate(() => console.error('from a second tab'));

  const other = await browser.newPage();
  await serve(other);
  await other.goto(`${ORIGIN}/`);
  await other.evaluate(() => console.error('from browser.newPage'));
  await other.close();
});

test.describe('a page opened in a beforeAll hook', () => {
  let shared: Page;

  test.beforeAll(async ({ browser }) => {
    shared = await browser.newPage();
    await serve(shared);
    await shared.goto(`${ORIGIN}/`);
    const logged = shared.waitForEvent('console');
    await shared.evaluate(() => console.error('from the hook'));
    await logged;
  });

  test.afterAll(async () => {
    await shared.close();
  });

  test("is watched in each test, and the hook's own errors go to the next test", async ({}, testInfo) => {
    expectConsoleErrors(testInfo, [/^console: from the hook \(.*\) \[recorded before this test/, /^console: from the shared page \(/]);
    await shared.evaluate(() => console.error('from the shared page'));
  });
});

test('an undeclared console error fails the test', async ({ page }) => {
  test.fail(true, 'the guard must fail this test: console.error was not declared');
  await page.evaluate(() => console.error('not declared'));
});

test('a declared error that never happens fails the test', async ({ page }, testInfo) => {
  test.fail(true, 'the guard must fail this test: the declared error never happened');
  expectConsoleErrors(testInfo, [/^console: never logged/]);
  await page.evaluate(() => console.log('fine'));
});
