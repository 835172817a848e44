// What keeps unsaved steps from being lost, with the run library's next write made to fail (a full
// quota, through the ?testHooks=1 hook): the failure is shown next to the run controls, leaving the
// page asks first while steps are not saved (the beforeunload handler cancels the event, which is
// what makes the browser prompt), and hiding the tab saves them (after which leaving no longer asks).
import { openPlayground, SMALL_BATCH, waitForStatus } from './page-helpers';
import { expect, test } from './test';

const HASH = `v=1&preset=tiny&${SMALL_BATCH}&train.steps=4&train.warmupSteps=2&train.evalEvery=0`;

test('a failed autosave is shown and arms the leave-page prompt; a hidden tab saves the steps', async ({ browser }) => {
  const page = await openPlayground(browser, `./?testHooks=1#${HASH}`);
  await page.evaluate(() =>
    (globalThis as unknown as { __nsaTest: { failNextStorageWrite(n: string): void } }).__nsaTest.failNextStorageWrite(
      'QuotaExceededError',
    ),
  );

  // One step: its autosave fails with the (injected) full quota, shown and never silent.
  await page.getByTestId('step-button').click();
  await expect(page.getByTestId('steps-done')).toHaveText('1', { timeout: 300_000 });
  await waitForStatus(page, /paused/);
  const line = page.getByTestId('autosave-status');
  await expect(line).toHaveAttribute('data-state', 'error');
  await expect(line).toContainText("Autosave failed: the browser's storage for this page is full (QuotaExceededError)");
  await expect(page.getByTestId('library-empty')).toBeVisible(); // nothing stored

  // Leaving now asks first (the step is not saved): the page's beforeunload handler cancels the unload.
  const leaveAsks = () =>
    page.evaluate(() => {
      const e = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(e);
      return e.defaultPrevented;
    });
  expect(await leaveAsks()).toBe(true);

  // The tab is hidden: the run is saved, and listed in the library.
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await expect(line).toHaveAttribute('data-state', 'saved');
  await expect(line).toHaveAttribute('data-step', '1');
  await expect(page.getByTestId('library-row')).toHaveCount(1);
  await expect(page.getByTestId('library-row')).toHaveAttribute('data-steps', '1');

  // Nothing unsaved: leaving no longer asks.
  expect(await leaveAsks()).toBe(false);
  await page.close();
});
