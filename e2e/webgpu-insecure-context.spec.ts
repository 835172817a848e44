// Without a secure context there is no navigator.gpu: the page must explain, not go blank.
// The page is served from a non-localhost http origin by routing its requests to the server.
import { adapterState, saveScreenshot } from './page-helpers';
import { expect, test } from './test';

const INSECURE_HOST = 'nsa-playground.test';

test('explains how to enable WebGPU when navigator.gpu is missing', async ({ context, page, baseURL }, testInfo) => {
  const real = new URL(baseURL!);
  const insecure = new URL(baseURL!);
  insecure.hostname = INSECURE_HOST;
  await context.route(`${insecure.origin}/**`, async (route) => {
    const url = new URL(route.request().url());
    url.hostname = real.hostname;
    await route.fulfill({ response: await route.fetch({ url: url.href }) });
  });
  await page.goto(insecure.href);
  expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
  expect(await adapterState(page)).toBe('unavailable');
  await expect(page.getByTestId('webgpu-unavailable-reason')).toContainText('navigator.gpu is missing');
  await expect(page.getByTestId('webgpu-unavailable-reason')).toContainText('secure context');
  await expect(page.getByTestId('run-button')).toHaveCount(0);
  await saveScreenshot(page, testInfo, 'insecure-context');
});
