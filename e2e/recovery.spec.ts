// Recovery without a browser reload (issue 10 part 2), on the tiny preset: the worker's device is
// destroyed while paused and mid-run (device.destroy(), test hooks: now, or before a given step), and the worker's thread
// is blocked mid-run (an endless loop, as a wedged worker). The page restarts the worker with a
// fresh device and continues the run from its last autosave (the run library's entry): the run
// resumes at that step, loses no more than the steps after it, and finishes with a loss for every
// step. (That a continued run's losses equal the uninterrupted run's bit for bit is
// e2e/library.spec.ts's round trip, and in process tests/worker/run-checkpoint.test.ts.) The stall banner names the phase and never covers the run
// controls (checked at desktop and 390 px widths).
import type { TestFault } from '../src/worker/session';
import { openPlayground, saveScreenshot, SMALL_BATCH, stepTo, trainingLosses, waitForStatus } from './page-helpers';
import { expect, type Page, test } from './test';

test.describe.configure({ mode: 'serial' });

const STEPS = 6;
const SAVED_AT = 3;
const FAULT_AT = 5; // after the evaluation at step 4, so the stalled phase is a step (an evaluation is allowed longer)
// One validation batch per evaluation: the claims are about recovery, not the validation loss.
const HASH = `v=1&preset=tiny&${SMALL_BATCH}&train.steps=${STEPS}&train.warmupSteps=2&train.evalEvery=4&train.evalBatches=1`;

let page: Page;

const recoveryNote = () => page.getByTestId('recovery-note');

async function injectFault(fault: TestFault): Promise<void> {
  await page.evaluate((f) => (window as unknown as { __nsaTest: { fault(f: TestFault): Promise<void> } }).__nsaTest.fault(f), fault);
}

/** A new run stepped to SAVED_AT (each Step autosaves), paused there. */
async function runSavedAt(): Promise<void> {
  const reset = page.getByTestId('reset-button');
  if (await reset.isEnabled()) {
    page.once('dialog', (d) => void d.accept());
    await reset.click();
    await waitForStatus(page, /idle/);
  }
  await stepTo(page, SAVED_AT, 120_000);
  const saved = page.getByTestId('autosave-status');
  await expect(saved).toHaveAttribute('data-state', 'saved', { timeout: 60_000 });
  await expect(saved).toHaveAttribute('data-step', String(SAVED_AT));
}

/** The run finished after recovering from step SAVED_AT, with a loss for every step. */
async function expectRecoveredRun(cause: string): Promise<void> {
  await expect(recoveryNote()).toHaveAttribute('data-state', 'recovered', { timeout: 120_000 });
  await expect(recoveryNote()).toHaveAttribute('data-cause', cause);
  await expect(recoveryNote()).toHaveAttribute('data-resumed-at', String(SAVED_AT));
  const lostAt = Number(await recoveryNote().getAttribute('data-lost-at'));
  expect(lostAt).toBeGreaterThanOrEqual(SAVED_AT);
  expect(lostAt).toBeLessThanOrEqual(FAULT_AT);
  await waitForStatus(page, /done/);
  const losses = await trainingLosses(page);
  expect(losses.map(([s]) => s)).toEqual([...Array(STEPS).keys()]);
  expect(losses.every(([, l]) => Number.isFinite(Number(l)))).toBe(true);
}

test.beforeAll(async ({ browser }) => {
  page = await openPlayground(browser, `./?testHooks=1#${HASH}`);
});

test.afterAll(async () => {
  await page.close();
});

test('a lost GPU device (device.destroy() while paused, then mid-run) restarts the worker and continues from the last autosave', async ({}, testInfo) => {
  await runSavedAt();
  // Lost while paused: the worker reports it, and the run comes back paused at its autosave.
  await page.evaluate(() => (window as unknown as { __nsaTest: { loseDevice(): Promise<void> } }).__nsaTest.loseDevice());
  await expect(recoveryNote()).toHaveAttribute('data-state', 'recovered', { timeout: 120_000 });
  await expect(recoveryNote()).toHaveAttribute('data-cause', 'device-lost');
  await expect(recoveryNote()).toHaveAttribute('data-resumed-at', String(SAVED_AT));
  await waitForStatus(page, /paused/);
  await expect(page.getByTestId('steps-done')).toHaveText(String(SAVED_AT));

  // Lost mid-run: the failed train() call recovers, and training goes on.
  await injectFault({ kind: 'lose-device', atStep: FAULT_AT });
  await page.getByTestId('run-button').click();
  await expect.poll(async () => Number(await recoveryNote().getAttribute('data-lost-at')), { timeout: 120_000 }).toBeGreaterThan(SAVED_AT);
  await expectRecoveredRun('device-lost');
  await expect(recoveryNote()).toContainText(`continued from its last autosave at step ${SAVED_AT}`);
  await saveScreenshot(page, testInfo, 'device-lost-recovered');
});

/** The banner and the run controls do not overlap (the banner sits in the page's flow), also with the controls scrolled to the top. */
async function expectBannerClearOfControls(): Promise<void> {
  await expectNoOverlap();
  await page.getByRole('group', { name: 'Run controls' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await expectNoOverlap();
}

async function expectNoOverlap(): Promise<void> {
  const banner = await page.getByTestId('stall-banner').boundingBox();
  const controls = await page.getByRole('group', { name: 'Run controls' }).boundingBox();
  if (!banner || !controls) throw new Error('stall banner or run controls not rendered');
  const overlaps =
    banner.x < controls.x + controls.width &&
    controls.x < banner.x + banner.width &&
    banner.y < controls.y + controls.height &&
    controls.y < banner.y + banner.height;
  expect(overlaps, `banner ${JSON.stringify(banner)} vs controls ${JSON.stringify(controls)}`).toBe(false);
}

test('a blocked worker raises the watchdog banner (phase, advice, clear of the controls); one click continues from the last autosave', async ({}, testInfo) => {
  await runSavedAt();
  await page.getByTestId('watchdog-seconds').fill('3');
  await injectFault({ kind: 'block', atStep: FAULT_AT, ms: 600_000 });
  await page.getByTestId('run-button').click();
  const banner = page.getByTestId('stall-banner');
  await expect(banner).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('stall-phase')).toHaveText(/^(step|eval)$/);
  // The banner names the phase of the last heartbeat, as the heartbeat panel shows it.
  const phase = await page.getByTestId('stall-phase').innerText();
  await expect(page.getByTestId('heartbeat-phase')).toHaveText(phase);
  await expect(banner).toContainText(`phase ${phase}`);
  await expect(page.getByTestId('stall-advice')).toContainText('Watchdog timeout');
  const restart = page.getByTestId('restart-worker');
  await expect(restart).toHaveText(`Restart the worker and continue from step ${SAVED_AT}`);
  await expectBannerClearOfControls();
  await saveScreenshot(page, testInfo, 'stall-desktop');
  await page.setViewportSize({ width: 390, height: 844 });
  await expectBannerClearOfControls();
  await saveScreenshot(page, testInfo, 'stall-390px');
  await page.setViewportSize({ width: 1400, height: 1000 });
  await restart.click();
  await expect(banner).toHaveCount(0, { timeout: 60_000 });
  await expectRecoveredRun('stalled');
  await page.getByTestId('watchdog-seconds').fill('60');
});
