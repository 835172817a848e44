// A browser with navigator.gpu but no usable adapter (GPU disabled, no unsafe SwiftShader flag):
// the page must say so, with the hints from WebGpuUnavailableError.
import { BASE_ARGS, CHROMIUM_PATH } from './gpu-mode';
import { adapterState, saveScreenshot } from './page-helpers';
import { expect, test } from './test';

test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: [...BASE_ARGS, '--disable-gpu'] } });

test('explains that no adapter was found', async ({ page }, testInfo) => {
  await page.goto('./');
  expect(await page.evaluate(() => 'gpu' in navigator)).toBe(true);
  expect(await adapterState(page)).toBe('unavailable');
  await expect(page.getByTestId('webgpu-unavailable-reason')).toContainText('no adapter was found');
  await expect(page.getByTestId('webgpu-unavailable-reason')).toContainText('--enable-unsafe-webgpu');
  await expect(page.getByTestId('run-button')).toHaveCount(0);
  await saveScreenshot(page, testInfo, 'no-adapter');
});
