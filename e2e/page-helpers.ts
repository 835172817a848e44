// Shared steps of the e2e specs.
import { expect, type Page, type TestInfo } from '@playwright/test';

/** Collects uncaught page errors and console errors (dedicated workers' included). */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return errors;
}

/** Waits until the page has probed WebGPU; returns 'ready' or 'unavailable'. */
export async function adapterState(page: Page): Promise<string> {
  const panel = page.getByTestId('adapter-panel');
  await expect(panel).toHaveAttribute('data-state', /^(ready|unavailable)$/, { timeout: 120_000 });
  return (await panel.getAttribute('data-state')) ?? '';
}

/** Fails (never skips) when the page found no adapter, quoting the page's explanation. */
export async function expectAdapter(page: Page): Promise<void> {
  if ((await adapterState(page)) !== 'ready') {
    const why = await page.getByTestId('webgpu-unavailable').innerText();
    throw new Error(`The page found no WebGPU adapter:\n${why}`);
  }
}

/** A full-page screenshot under test-results/, attached to the report. */
export async function saveScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}
