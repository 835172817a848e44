// The page's autosave (IndexedDB): train the tiny preset a few steps, pause (the pause autosaves),
// reload: a banner offers the run; Continue resumes it paused at its step, and the finished run's
// losses equal the uninterrupted run's bit for bit. Discard removes the banner for good.

import { expectAdapter, openPlayground, saveScreenshot, stepTo, trainingLosses, waitForStatus } from './page-helpers';
import { expect, type Page, test } from './test';

test.describe.configure({ mode: 'serial' });

const STEPS = 6;
const PAUSE_AT = 3;
const HASH = `v=1&preset=tiny&train.steps=${STEPS}&train.warmupSteps=2&train.evalEvery=3`;

async function autosavedAt(page: Page, step: number): Promise<void> {
  const line = page.getByTestId('autosave-status');
  await expect(line).toHaveAttribute('data-state', /^(saved|error)$/, { timeout: 120_000 });
  if ((await line.getAttribute('data-state')) === 'error') throw new Error(await line.innerText());
  await expect(line).toHaveAttribute('data-step', String(step));
}

test('pause autosaves; after a reload the banner continues the run and the losses equal the uninterrupted run; Discard removes it', async ({
  browser,
}, testInfo) => {
  const page = await openPlayground(browser, `./#${HASH}`);
  await expect(page.getByTestId('autosave-banner')).toHaveCount(0); // a fresh browser profile

  // The uninterrupted run (autosaved when done).
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /done/);
  await autosavedAt(page, STEPS);
  const straight = await trainingLosses(page);
  expect(straight.map(([s]) => s)).toEqual([...Array(STEPS).keys()]);

  // A fresh run: run, pause at PAUSE_AT (stepped, so the pause lands exactly there).
  await page.getByTestId('reset-button').click(); // saved: no confirmation needed
  await waitForStatus(page, /idle/);
  await stepTo(page, PAUSE_AT);
  await autosavedAt(page, PAUSE_AT);

  // Reload with the preset's own step count: Continue must bring the autosave's config back.
  await page.goto('./#v=1&preset=tiny');
  await page.reload();
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
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /done/);
  expect(Number(await page.getByTestId('steps-done').innerText())).toBe(STEPS);
  const resumed = await trainingLosses(page);
  expect(resumed).toEqual(straight);
  await autosavedAt(page, STEPS);
  testInfo.annotations.push({ type: 'loss', description: `final loss ${resumed.at(-1)?.[1]} (uninterrupted ${straight.at(-1)?.[1]})` });

  // Discard: the banner goes, and stays gone after another reload.
  await page.reload();
  await expectAdapter(page);
  await expect(banner).toHaveAttribute('data-step', String(STEPS));
  await page.getByTestId('autosave-discard').click();
  await expect(banner).toHaveCount(0);
  await page.reload();
  await expectAdapter(page);
  await expect(page.getByTestId('run-button')).toBeEnabled();
  await expect(banner).toHaveCount(0);
  await page.close();
});
