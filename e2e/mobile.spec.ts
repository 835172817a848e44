// A phone (390 × 844) and a 4k screen: nothing overflows horizontally, the run controls come
// before the config on the phone (on the first screen, Run within 5 Tab presses or the skip link, the
// page at most 4 screens tall with its panels folded), and the stepper's heatmap stays inside its box.
import { expectAdapter, saveScreenshot, SMALL_BATCH, stepTo, tabsTo } from './page-helpers';
import { expect, type Page, test } from './test';

/** Widths (CSS px) of the page and of the panels that overflowed before. */
async function widths(page: Page) {
  return page.evaluate(() => {
    const w = (sel: string) => Math.max(0, ...[...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect().right));
    return {
      viewport: window.innerWidth,
      scroll: document.documentElement.scrollWidth,
      panels: w('.panel'),
      stepper: w('[data-testid="stepper"]'),
      heatmapBox: w('.stepper-heatmap'),
      legend: w('.stepper-legend, [data-testid="stepper-legend"]'),
      config: w('[data-testid="config-panel"]'),
      charts: w('[data-testid="charts-panel"]'),
      explain: w('[data-testid="explain"] svg'),
    };
  });
}

test('phone: no horizontal overflow, Run reachable before the config', async ({ browser }, testInfo) => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`./#v=1&preset=tiny&${SMALL_BATCH}&train.steps=3&train.evalEvery=0`);
  await expectAdapter(page);
  const run = await page.getByTestId('run-button').boundingBox();
  const config = await page.getByTestId('config-panel').boundingBox();
  expect(run!.y).toBeLessThan(config!.y);
  expect(run!.y + run!.height).toBeLessThan(844); // on the first screen
  // Before any panel is expanded, the page is at most 4 screens tall (issue 24: it was 12).
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  expect(height, 'document height').toBeLessThanOrEqual(4 * 844);
  // The skip link is the first Tab stop and moves the focus to Run; Run itself is within 5 Tab presses.
  const tabs = await tabsTo(page, 'run-button', 10);
  expect(tabs, 'Tab presses to Run').toBeLessThanOrEqual(5);
  await tabsTo(page, 'skip-to-run', 1);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('run-button')).toBeFocused();
  expect(await page.evaluate(() => location.hash)).toContain('preset=tiny'); // the config's hash, not #run-panel
  testInfo.annotations.push({
    type: 'phone',
    description: `390 × 844: ${height} px (${(height / 844).toFixed(2)} screens), Run after ${tabs} Tab presses`,
  });
  await stepTo(page, 2);
  await expect(page.getByTestId('stepper')).toHaveAttribute('data-loading', 'false', { timeout: 60_000 });
  const w = await widths(page);
  for (const [name, right] of Object.entries(w)) if (name !== 'viewport') expect(right, name).toBeLessThanOrEqual(w.viewport);
  await saveScreenshot(page, testInfo, 'phone-390');
  await page.close();
});

test('4k screen: no overflow and the layout uses the width', async ({ browser }, testInfo) => {
  const page = await browser.newPage({ viewport: { width: 3840, height: 2160 } });
  await page.goto('./#v=1&preset=tiny');
  await expectAdapter(page);
  const w = await widths(page);
  expect(w.scroll).toBeLessThanOrEqual(w.viewport);
  expect((await page.getByTestId('charts-panel').boundingBox())!.width).toBeGreaterThan(1400);
  await saveScreenshot(page, testInfo, 'screen-3840');
  await page.close();
});
