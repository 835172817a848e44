// The sweep (issue 24): a 2-setting grid of the recall preset (NSA and dense, 4 steps each) runs on
// the page's GPU into the run library. Stop pauses the first setting; after a reload the sweep is
// still there and Resume continues it from its autosave, then runs the second; the results table
// lists both (accuracy, val loss, steps, time) and sorts; the library lists the sweep's runs by its tag.
// The last run, shared as a standalone web page, shows the same chart series without the app.
import { readFileSync } from 'node:fs';

import { download, expectAdapter, expectNoAxeViolations, openPlayground, saveScreenshot } from './page-helpers';
import { expect, type Page, test } from './test';

const STEPS = 4;

async function planSweep(page: Page): Promise<void> {
  const panel = page.getByTestId('sweep-panel');
  await panel.locator('summary').scrollIntoViewIfNeeded();
  await page.getByTestId('sweep-name-input').fill('e2e grid');
  await page.getByTestId('sweep-preset').selectOption('recall');
  for (const box of await page.locator('[data-testid^="sweep-mechanism-"]').all()) await box.uncheck();
  await page.getByTestId('sweep-mechanism-nsa').check();
  await page.getByTestId('sweep-mechanism-dense').check();
  await page.getByTestId('sweep-seeds').fill('1');
  await page.getByTestId('sweep-steps').fill(String(STEPS));
  await page.getByTestId('sweep-batchSize').fill('1');
  await page.getByTestId('sweep-evalEvery').fill('2');
  await page.getByTestId('sweep-evalBatches').fill('1');
  await page.getByTestId('sweep-target').fill('100');
  await expect(page.getByTestId('sweep-size')).toHaveAttribute('data-settings', '2');
}

test('sweep: two settings into the library, stopped, resumed after a reload, results sorted, runs listed by the sweep tag', async ({
  browser,
}, testInfo) => {
  const started = Date.now();
  const page = await openPlayground(browser, './');
  const panel = page.getByTestId('sweep-panel');
  await planSweep(page);
  // A bad grid names the field; it cannot start.
  await page.getByTestId('sweep-seeds').fill('1.5');
  await expect(page.getByTestId('sweep-problems')).toContainText('Seeds: must be integers');
  await expect(page.getByTestId('sweep-start')).toBeDisabled();
  await page.getByTestId('sweep-seeds').fill('1');

  // Start, then Stop at once: the first setting pauses once it trains; nothing else starts.
  await page.getByTestId('sweep-start').click();
  await expect(panel).toHaveAttribute('data-running', 'true');
  await page.getByTestId('sweep-stop').click();
  await expect(panel).toHaveAttribute('data-running', 'false', { timeout: 120_000 });
  const rows = page.getByTestId('sweep-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toHaveAttribute('data-state', 'pending');
  const firstState = await rows.nth(0).getAttribute('data-state');
  expect(['stopped', 'finished']).toContain(firstState);
  const stoppedAt = Number(await rows.nth(0).getByTestId('sweep-steps').getAttribute('data-value'));
  testInfo.annotations.push({ type: 'sweep stop', description: `first setting ${firstState} at step ${stoppedAt}` });

  // Reload: the sweep is kept; Resume continues the first setting, then trains the second.
  await page.reload();
  await expectAdapter(page);
  await panel.locator('summary').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('sweep-name')).toHaveText('e2e grid');
  await expect(rows.nth(0)).toHaveAttribute('data-state', firstState!);
  await page.getByTestId('sweep-resume').click();
  await expect(panel).toHaveAttribute('data-finished', '2', { timeout: 240_000 });
  await expect(panel).toHaveAttribute('data-running', 'false');
  await expect(page.getByTestId('sweep-resume')).toHaveCount(0);
  for (const i of [0, 1]) {
    const row = rows.nth(i);
    await expect(row).toHaveAttribute('data-state', 'finished');
    await expect(row.getByTestId('sweep-steps')).toHaveText(`${STEPS} / ${STEPS}`);
    await expect(row.getByTestId('sweep-accuracy')).toHaveText(/^\d+(\.\d)?%/);
    await expect(row.getByTestId('sweep-val-loss')).toHaveText(/^\d+\.\d+$/);
    await expect(row.getByTestId('sweep-time')).toHaveText(/^\d+\.\d s$/);
  }
  await expect(rows.nth(0)).toHaveAttribute('data-mechanism', 'nsa');
  await expect(rows.nth(1)).toHaveAttribute('data-mechanism', 'dense');
  // Sorted by best val loss (lowest first), then the other way.
  const losses = await rows.getByTestId('sweep-val-loss').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  await page.getByTestId('sweep-sort-bestValLoss').click();
  const asc = await rows.getByTestId('sweep-val-loss').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  expect(asc).toEqual([...losses].sort((a, b) => a - b));
  await page.getByTestId('sweep-sort-bestValLoss').click();
  await expect(page.getByTestId('sweep-table')).toHaveAttribute('data-sort', 'bestValLoss desc');
  const desc = await rows.getByTestId('sweep-val-loss').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  expect(desc).toEqual([...asc].reverse());

  // The library: each setting is a run named after the sweep, tagged with it; the filter lists them.
  const libRows = page.getByTestId('library-row');
  await expect(libRows).toHaveCount(2);
  await page.getByTestId('sweep-show-library').click();
  await expect(page.getByTestId('library-filter')).toHaveValue('sweep:e2e grid');
  await expect(libRows).toHaveCount(2);
  await expect(libRows.getByTestId('library-name')).toHaveText(['e2e grid · dense', 'e2e grid · nsa']);
  await expect(libRows.first().getByTestId('library-steps')).toHaveText(`${STEPS} / ${STEPS}`);
  // npm run learn's figure: a line per setting, and the NSA setting's needle selected dotted; the
  // table as CSV, a row per setting.
  await expect(page.getByTestId('sweep-figure').locator('path')).toHaveCount(3);
  await expect(page.getByTestId('sweep-figure').locator('path[stroke-dasharray="2 3"]')).toHaveCount(1);
  const table = readFileSync(await (await download(page, 'sweep-download-csv')).path(), 'utf8')
    .trim()
    .split('\n');
  expect(table.map((l) => l.split(',').slice(0, 4).join(','))).toEqual([
    'mechanism,seed,lr,state',
    'nsa,1,0.003,finished',
    'dense,1,0.003,finished',
  ]);
  await saveScreenshot(page, testInfo, 'sweep');
  await expectNoAxeViolations(page, testInfo, 'sweep');

  // The held run (the last setting: dense on the recall task) shared as a standalone web page: opened
  // in a fresh context without JavaScript or network, it draws the page's loss, validation and
  // accuracy series, the chance line and its band.
  const [html] = await Promise.all([page.waitForEvent('download'), page.getByTestId('share-html').click()]);
  expect(html.suggestedFilename()).toBe('e2e_grid_dense.nsa-result.html');
  const csv = readFileSync(await (await download(page, 'download-metrics.csv')).path(), 'utf8')
    .trim()
    .split('\n');
  const header = csv[0].split(',');
  const column = (name: string) =>
    csv
      .slice(1)
      .map((l) => l.split(','))
      .filter((r) => r[header.indexOf(name)] !== '')
      .map((r) => `${r[0]}:${Number(r[header.indexOf(name)])}`);
  const charts = page.getByTestId('charts-panel');
  await charts.scrollIntoViewIfNeeded();
  const accuracyChart = page.getByTestId('accuracy-chart');
  await expect(accuracyChart).toHaveAttribute('data-current', 'true');
  const context = await browser.newContext({ javaScriptEnabled: false, offline: true });
  const standalone = await context.newPage();
  const htmlPath = testInfo.outputPath(html.suggestedFilename()); // a file:// page needs its .html extension
  await html.saveAs(htmlPath);
  await standalone.goto(`file://${htmlPath}`);
  await expect(standalone.getByTestId('standalone-name')).toHaveText('e2e grid · dense');
  const values = (chart: string, series: string) =>
    standalone.getByTestId(chart).locator(`[data-series="${series}"]`).getAttribute('data-values');
  const trainRaw = column('loss');
  expect(trainRaw).toHaveLength(STEPS);
  expect((await values('standalone-loss', 'train-raw'))!.split(' ')).toEqual(trainRaw);
  // Evaluations (their own csv rows, at the steps done): validation loss and accuracy.
  expect(column('val_loss')).toHaveLength(2);
  expect((await values('standalone-loss', 'val'))!.split(' ')).toEqual(column('val_loss'));
  expect((await values('standalone-accuracy', 'accuracy'))!.split(' ')).toEqual(column('accuracy'));
  await expect(standalone.getByTestId('standalone-loss')).toHaveAttribute(
    'data-points',
    (await page.getByTestId('loss-chart').getAttribute('data-points'))!,
  );
  await expect(standalone.locator('[data-reference]')).toHaveAttribute(
    'data-reference',
    (await accuracyChart.getAttribute('data-reference'))!,
  );
  await expect(standalone.locator('[data-band]')).toHaveAttribute('data-band', (await accuracyChart.getAttribute('data-band'))!);
  await saveScreenshot(standalone, testInfo, 'standalone-result');
  await context.close();
  testInfo.annotations.push({ type: 'sweep time', description: `${((Date.now() - started) / 1000).toFixed(1)} s` });
  await page.close();
});
