// Shared steps of the e2e specs (console, page and HTTP errors: the guard in e2e/test.ts).
import { readFileSync } from 'node:fs';

import AxeBuilder from '@axe-core/playwright';

import { type Browser, type Download, expect, type Page, type TestInfo } from './test';

/**
 * The tiny preset at 2 sequences a step instead of 8, for specs whose claims hold at any batch
 * (autosave, recovery, the library, checkpoints): on SwiftShader a step then costs about a third of
 * the CPU (tiny NSA in Node, 2026-11-29: 0.8 s of CPU a step instead of 2.3 s).
 */
export const SMALL_BATCH = 'train.batchSize=2';

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

/** Waits until the run status matches `want` (or error, which throws with the run's message). */
export async function waitForStatus(page: Page, want: RegExp): Promise<void> {
  const status = page.getByTestId('run-status');
  await expect(status).toHaveAttribute('data-status', new RegExp(`^(${want.source}|error)$`), { timeout: 300_000 });
  if ((await status.getAttribute('data-status')) === 'error')
    throw new Error(`training failed: ${await page.getByTestId('run-error').innerText()}`);
}

/** Clicks a download button and returns the download. */
export async function download(page: Page, testId: string): Promise<Download> {
  const [d] = (await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()])) as [Download, void];
  return d;
}

/** The training losses of the page's metrics.csv (full precision), by step. */
export async function trainingLosses(page: Page): Promise<Array<[number, string]>> {
  return readFileSync(await (await download(page, 'download-metrics.csv')).path(), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','))
    .filter((r) => r[1] !== '')
    .map((r): [number, string] => [Number(r[0]), r[1]]);
}

/** Presses Step until `steps` steps are done (from a fresh or paused run), waiting for each to finish and pause. */
export async function stepTo(page: Page, steps: number, timeout = 300_000): Promise<void> {
  for (let i = 1; i <= steps; i++) {
    await expect(page.getByTestId('step-button')).toBeEnabled({ timeout });
    await page.getByTestId('step-button').click();
    await expect(page.getByTestId('steps-done')).toHaveText(String(i), { timeout });
    await waitForStatus(page, /paused/);
  }
}

/** A new desktop-sized page on `path` (e.g. `./#<config hash>`), once the adapter is named (its errors: e2e/test.ts). */
export async function openPlayground(browser: Browser, path: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(path);
  await expectAdapter(page);
  return page;
}

/** Opens every config section (they start folded, issue 24), so a spec can edit any field. */
export async function expandConfig(page: Page): Promise<void> {
  const toggle = page.getByTestId('config-expand-all');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
}

/**
 * axe-core over the whole page with every rule it runs by default (WCAG 2 A and AA, and its best
 * practices, e.g. empty table headers and unique landmarks): fails listing each violation with its
 * nodes; the violations are attached to the report as `axe-<name>.json`.
 */
export async function expectNoAxeViolations(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const started = Date.now();
  // Legacy mode: axe runs in the page's frames without opening a blank page of its own, which a page
  // made by browser.newPage() (its own context) cannot do.
  const result = await new AxeBuilder({ page }).setLegacyMode().analyze();
  await testInfo.attach(`axe-${name}.json`, { body: JSON.stringify(result.violations, null, 2), contentType: 'application/json' });
  const lines = result.violations.map(
    (v) =>
      `${v.id} (${v.impact ?? 'n/a'}): ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary ?? ''}`).join('\n')}`,
  );
  testInfo.annotations.push({
    type: `axe ${name}`,
    description: `${result.violations.length} violations, ${result.passes.length} rules passed, ${Date.now() - started} ms`,
  });
  expect(lines, `axe-core on ${name}`).toEqual([]);
}

/**
 * Presses Tab from the top of the page until `testId` has the focus; returns the presses (Infinity
 * past `max`). The start is a focused, untabbable marker before everything (a blur would leave
 * the browser's focus starting point where the focus was).
 */
export async function tabsTo(page: Page, testId: string, max = 60): Promise<number> {
  await page.evaluate(() => {
    const start = document.createElement('span');
    start.tabIndex = -1;
    start.id = 'e2e-tab-start';
    document.body.prepend(start);
    start.focus();
    window.scrollTo(0, 0);
  });
  let presses = Infinity;
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) === testId) {
      presses = i;
      break;
    }
  }
  await page.evaluate(() => document.getElementById('e2e-tab-start')?.remove());
  return presses;
}

/** The element's box lies inside the first viewport (no scrolling). */
export async function expectInFirstViewport(page: Page, what: string, locator: ReturnType<Page['getByTestId']>): Promise<void> {
  const box = await locator.boundingBox();
  const vp = page.viewportSize()!;
  expect(box, `${what}: rendered`).not.toBeNull();
  const scrollY = await page.evaluate(() => window.scrollY);
  expect(scrollY, 'the page is at its top').toBe(0);
  expect(box!.y, `${what}: top`).toBeGreaterThanOrEqual(0);
  expect(box!.y + box!.height, `${what}: bottom within ${vp.height} px`).toBeLessThanOrEqual(vp.height);
}
