// The first page, for real: the built app in headless Chromium, WebGPU on SwiftShader (or the
// system GPU with NSA_E2E_GPU=system), training in the dedicated worker.
import { expect, test } from '@playwright/test';
import { EXPECTED_ADAPTER, GPU_MODE } from './gpu-mode';
import { collectErrors, expectAdapter, saveScreenshot } from './page-helpers';

const STEPS = 20;
// Byte-level loss starts near ln 256 ≈ 5.55; the tiny preset (seed 1) must clearly learn in STEPS
// steps. The margin is far above step-to-step batch noise, so a flat or rising loss fails.
const MIN_LOSS_DROP = 0.3;

test('names the WebGPU adapter the worker trains on', async ({ page }, testInfo) => {
  const errors = collectErrors(page);
  await page.goto('./');
  await expectAdapter(page);
  await expect(page.getByTestId('adapter-name')).toHaveText(EXPECTED_ADAPTER);
  if (GPU_MODE === 'swiftshader') {
    await expect(page.getByTestId('adapter-architecture')).toHaveText('swiftshader');
    await expect(page.getByTestId('adapter-kind')).toHaveText('software');
  }
  await expect(page.getByRole('button', { name: 'Train' })).toBeEnabled();
  await expect(page.getByLabel('Steps')).toHaveValue('30');
  await saveScreenshot(page, testInfo, 'adapter');
  expect(errors).toEqual([]);
});

test('trains the tiny preset in the worker and the shown loss falls', async ({ page }, testInfo) => {
  const errors = collectErrors(page);
  await page.goto('./');
  await expectAdapter(page);

  await page.getByLabel('Steps').fill(String(STEPS));
  await page.getByRole('button', { name: 'Train' }).click();
  const status = page.getByTestId('run-status');
  await expect(status).toHaveText(/^(starting|training)$/);
  await expect(status).toHaveText(/^(done|error|stopped|paused)$/, { timeout: 540_000 });
  if ((await status.innerText()) === 'error') throw new Error(`training failed: ${await page.getByTestId('run-error').innerText()}`);
  await expect(status).toHaveText('done');

  await expect(page.getByTestId('steps-done')).toHaveText(String(STEPS));
  await expect(page.getByTestId('steps-target')).toHaveText(String(STEPS));
  const first = Number(await page.getByTestId('loss-first').innerText());
  const last = Number(await page.getByTestId('loss-latest').innerText());
  testInfo.annotations.push({ type: 'loss', description: `first ${first}, last ${last} after ${STEPS} steps` });
  expect(first).toBeGreaterThan(4.5);
  expect(first).toBeLessThan(6.5);
  expect(last).toBeLessThan(first - MIN_LOSS_DROP);
  expect(Number((await page.getByTestId('tokens-per-second').innerText()).replace(/,/g, ''))).toBeGreaterThan(0);
  await expect(page.getByTestId('loss-chart').locator('.recharts-line-curve')).toBeVisible();

  await saveScreenshot(page, testInfo, 'trained-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await saveScreenshot(page, testInfo, 'trained-dark');
  expect(errors).toEqual([]);
});
