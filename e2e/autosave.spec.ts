// The page's autosave (IndexedDB): step the tiny preset a few steps (each pause autosaves), reload:
// a banner offers the run; Continue brings it back paused at its step with its config and its
// losses so far. Discard removes the banner for good. (That a continued run's losses equal the
// uninterrupted run's bit for bit is e2e/library.spec.ts's round trip, and in process
// tests/worker/run-checkpoint.test.ts and tests/train/resume.test.ts.)

import { expectAdapter, saveScreenshot, SMALL_BATCH, stepTo, trainingLosses, waitForStatus } from './page-helpers';
import { expect, type Page, test } from './test';

test.describe.configure({ mode: 'serial' });

const STEPS = 6;
// Paused at the end of the warm-up, after an evaluation (of one batch: its loss is not the claim).
const PAUSE_AT = 2;
const HASH = `v=1&preset=tiny&${SMALL_BATCH}&train.steps=${STEPS}&train.warmupSteps=2&train.evalEvery=2&train.evalBatches=1`;

async function autosavedAt(page: Page, step: number): Promise<void> {
  const line = page.getByTestId('autosave-status');
  await expect(line).toHaveAttribute('data-state', /^(saved|error)$/, { timeout: 120_000 });
  if ((await line.getAttribute('data-state')) === 'error') throw new Error(await line.innerText());
  await expect(line).toHaveAttribute('data-step', String(step));
}

test('pause autosaves; in the tab opened again the banner continues the run at its step with its config and losses; Discard removes it', async ({
  browser,
}, testInfo) => {
  // A context of its own (not browser.newPage's): the page is closed and opened again in it.
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  let page = await context.newPage();
  await page.goto(`./#${HASH}`);
  await expectAdapter(page);
  await expect(page.getByTestId('autosave-banner')).toHaveCount(0); // a fresh browser profile

  // Step to PAUSE_AT (stepped, so the pause lands exactly there).
  await stepTo(page, PAUSE_AT);
  await autosavedAt(page, PAUSE_AT);
  const before = await trainingLosses(page);
  expect(before.map(([s]) => s)).toEqual([...Array(PAUSE_AT).keys()]);

  // The tab closed, and the page opened again on the preset's own link (its own step count):
  // Continue must bring the autosave's config back. (Not a hash change then a reload: that raced
  // the page's "open the link as a new run?" question against the reload, which then waited for
  // a load that never came, twice in CI.)
  await page.close();
  page = await context.newPage();
  await page.goto('./#v=1&preset=tiny');
  await expectAdapter(page);
  const banner = page.getByTestId('autosave-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toHaveAttribute('data-step', String(PAUSE_AT));
  await expect(banner).toContainText(`A run was saved at step ${PAUSE_AT}`);
  await saveScreenshot(page, testInfo, 'autosave-banner');
  await page.getByTestId('autosave-continue').click();
  await waitForStatus(page, /paused/);
  await expect(banner).toHaveCount(0);
  await expect(page.getByTestId('steps-done')).toHaveText(String(PAUSE_AT));
  await expect(page.getByTestId('config-field-train.steps')).toHaveValue(String(STEPS));
  await expect(page.getByTestId('run-button')).toHaveText(/Resume/);
  expect(await trainingLosses(page)).toEqual(before);
  await saveScreenshot(page, testInfo, 'autosave-continued');

  // Discard: the banner goes, and stays gone after another reload.
  await page.reload();
  await expectAdapter(page);
  await expect(banner).toHaveAttribute('data-step', String(PAUSE_AT));
  await page.getByTestId('autosave-discard').click();
  await expect(banner).toHaveCount(0);
  await page.reload();
  await expectAdapter(page);
  await expect(page.getByTestId('run-button')).toBeEnabled();
  await expect(banner).toHaveCount(0);
  await context.close();
});
