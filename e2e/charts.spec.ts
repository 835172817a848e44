// Charts worth exporting: SVG, PNG and CSV per chart, the wall-clock x axis, zoom, and the chart
// settings carried by the URL across a reload; metrics.csv has the gate means.
import { readFileSync } from 'node:fs';

import { download, openPlayground, SMALL_BATCH, stepTo } from './page-helpers';
import { expect, test } from './test';

test('export each chart as SVG, PNG and CSV; wall-clock x axis, zoom and settings in the URL', async ({ browser }) => {
  // One validation batch per evaluation: the charts' points are checked, not the validation loss.
  const page = await openPlayground(browser, `./#v=1&preset=tiny&${SMALL_BATCH}&train.steps=4&train.evalEvery=2&train.evalBatches=1`);
  await stepTo(page, 3);
  const loss = page.getByTestId('loss-chart');
  await expect(loss).toHaveAttribute('data-current', 'true');

  const svg = await download(page, 'loss-chart-svg');
  expect(svg.suggestedFilename()).toMatch(/^tiny-nsa-.*_nsa_step3_loss\.svg$/);
  const svgText = readFileSync(await svg.path(), 'utf8');
  expect(svgText).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  expect(await page.evaluate((t) => new DOMParser().parseFromString(t, 'image/svg+xml').querySelector('parsererror'), svgText)).toBeNull();
  expect(svgText).toContain('recharts-line-curve');

  const png = readFileSync(await (await download(page, 'gates-chart-png')).path());
  expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
  expect(png.readUInt32BE(16)).toBeGreaterThan(100); // width at 2×

  const csv = readFileSync(await (await download(page, 'gates-chart-csv')).path(), 'utf8')
    .trim()
    .split('\n');
  expect(csv[0]).toBe('series,step,value');
  expect(new Set(csv.slice(1).map((l) => l.split(',')[0]))).toEqual(new Set(['compressed', 'selected', 'window']));
  const metrics = readFileSync(await (await download(page, 'download-metrics.csv')).path(), 'utf8').split('\n')[0];
  expect(metrics.endsWith(',gate_cmp,gate_sel,gate_win,accuracy,needle_selected')).toBe(true);

  // Wall-clock x axis, zoom, log scale: into the URL, restored by a reload.
  await page.getByTestId('chart-x-axis').selectOption('time');
  await page.getByTestId('log-scale').check();
  await page.getByTestId('chart-zoom-from').fill('0');
  await page.getByTestId('chart-zoom-to').fill('1000');
  await page.getByTestId('chart-zoom-to').press('Enter');
  await expect.poll(() => page.evaluate(() => location.search)).toBe('?log=1&x=time&zoom=0-1000');
  const timeCsv = readFileSync(await (await download(page, 'loss-chart-csv')).path(), 'utf8').split('\n')[0];
  expect(timeCsv).toBe('series,seconds,value');
  await page.reload();
  await expect(page.getByTestId('chart-x-axis')).toHaveValue('time');
  await expect(page.getByTestId('log-scale')).toBeChecked();
  await expect(page.getByTestId('chart-zoom-to')).toHaveValue('1000');
  await page.getByTestId('chart-zoom-reset').click();
  await expect.poll(() => page.evaluate(() => location.search)).toBe('?log=1&x=time');
  await page.close();
});

test("a passkey run's accuracy chart: the whole, one dashed line per digit of the key, the needle selected, and whole keys by needle depth", async ({
  browser,
}) => {
  // Evaluated after each step on one batch (4 keys): the lines are checked, not their values.
  const page = await openPlayground(browser, './#v=1&preset=passkey&train.steps=4&train.evalEvery=1&train.evalBatches=1');
  await stepTo(page, 2);
  const accuracy = page.getByTestId('accuracy-chart');
  // 2 evaluations × 6 lines: the accuracy, its 4 digits and NSA's share of answers whose source was selected.
  await expect(accuracy).toHaveAttribute('data-points', '12', { timeout: 60_000 });
  for (const id of ['accuracy', 'needle', 'digit-1', 'digit-2', 'digit-3', 'digit-4'])
    await expect(accuracy.locator(`.series-${id} .recharts-line-curve`), id).toHaveCount(1);
  await expect(accuracy.locator('.series-digit-5')).toHaveCount(0); // the preset's key has 4 digits
  await expect(accuracy).toContainText('digit 4');
  await expect(accuracy).toContainText('needle selected');
  // Under it, the latest evaluation's whole keys by needle position: four ranges, the 4 keys between them.
  const strip = page.getByTestId('depth-strip');
  await expect(strip.getByTestId('depth-cell')).toHaveCount(4);
  const keys = await strip.locator('.depth-n').allTextContents();
  expect(keys.reduce((a, t) => a + Number.parseInt(t, 10), 0)).toBe(4);
  await page.close();
});
