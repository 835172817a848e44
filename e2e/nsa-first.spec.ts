// NSA first: the default preset trains NSA, and after two steps the stepper already shows a query
// that leaves blocks out; the explanation follows the config; the hover says why a block was not
// picked; a dense run's stepper offers the NSA counterpart.
import {
  expandConfig,
  expectAdapter,
  expectInFirstViewport,
  expectNoAxeViolations,
  openPlayground,
  saveScreenshot,
  SMALL_BATCH,
  stepTo,
  tabsTo,
} from './page-helpers';
import { expect, test } from './test';

test('the default preset trains NSA and the stepper shows sparsity after 2 steps', async ({ browser }, testInfo) => {
  const page = await openPlayground(browser, './');
  await expect(page.getByTestId('config-field-model.attention')).toHaveValue('nsa');
  // The first screen is the experiment (issue 24): at 1400 × 1000 Run, the loss chart and the NSA
  // picture without scrolling, and Run within 5 Tab presses.
  await expectInFirstViewport(page, 'Run', page.getByTestId('run-button'));
  await expectInFirstViewport(page, 'the loss chart', page.getByTestId('loss-chart'));
  await expectInFirstViewport(page, 'the NSA picture', page.getByTestId('explain').locator('svg.explain-svg'));
  const tabs = await tabsTo(page, 'run-button', 10);
  expect(tabs, 'Tab presses to Run').toBeLessThanOrEqual(5);
  testInfo.annotations.push({ type: 'first screen', description: `1400 × 1000: Run after ${tabs} Tab presses` });
  // The explanation: numbers of the config, the paper link, and they follow an edit.
  const explain = page.getByTestId('explain');
  await expect(explain.getByRole('link', { name: /arXiv 2502\.11089/ })).toHaveAttribute('href', 'https://arxiv.org/abs/2502.11089');
  await expect(page.getByTestId('explain-t')).toHaveText('63');
  await expect(page.getByTestId('explain-cmp')).toHaveText('15'); // (64 − 8)/4 + 1
  await expect(page.getByTestId('explain-reads')).toContainText(
    '15 compressed + 24 selected + 16 window = 55 keys, where dense attention reads 64',
  );
  await expandConfig(page);
  await page.getByTestId('config-field-model.nsa.w').fill('8');
  await expect(page.getByTestId('explain-reads')).toContainText('+ 8 window = 47 keys');
  await page.getByTestId('config-field-model.nsa.w').fill('16');
  await expect(page.getByTestId('config-help-model.nsa.lSel')).toHaveAttribute('title', /Selection block length/);

  await stepTo(page, 2);
  const stepper = page.getByTestId('stepper');
  await expect(stepper).toHaveAttribute('data-loading', 'false', { timeout: 60_000 });
  await expect(stepper).toHaveAttribute('data-invalid-rows', '0');
  // The last query (t = 63) has 8 candidate blocks and reads n = 3 of them.
  await page.getByTestId('stepper-t-slider').fill('63');
  await expect(page.getByTestId('stepper-t')).toHaveAttribute('data-t', '63');
  const blocks = await page
    .getByTestId('stepper-range')
    .evaluateAll((els) => els.flatMap((e) => (e.getAttribute('data-blocks') ?? '').split(',')));
  expect(blocks).toHaveLength(3);
  // Hover the heatmap cell (t = 63, a block not read): the tooltip answers why.
  // Hover the heatmap cell (t = 63, a block not read), placed with the heatmap's margins
  // (src/ui/stepper/heatmap-layout.ts: left 44, top 26, right 10, bottom 10): the tooltip says why.
  const box = (await page.getByTestId('stepper-heatmap').boundingBox())!;
  const picked = new Set(blocks.map(Number));
  const notPicked = [1, 2, 3, 4, 5, 6].find((j) => !picked.has(j))!;
  const plotW = box.width - 54;
  const plotH = box.height - 36;
  await page.mouse.move(box.x + 44 + ((notPicked + 0.5) / 8) * plotW, box.y + 26 + ((63 + 0.5) / 64) * plotH);
  await expect(page.getByTestId('stepper-why')).toContainText(/^Not selected: P = [\d.]+ (is below|ties)/);
  await saveScreenshot(page, testInfo, 'nsa-first');
  // The main view with a run, its charts and stepper drawn and every config section open: no axe-core violation.
  await page.mouse.move(0, 0);
  await expectNoAxeViolations(page, testInfo, 'playground');

  // Share result: one file (and a link) that reopens the run — its charts and selections — in a fresh
  // browser context (another browser's storage: nothing of the run is there but the file).
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('share-result').click()]);
  expect(file.suggestedFilename()).toMatch(/\.nsa-result\.json$/);
  const lossPoints = (await page.getByTestId('loss-chart').getAttribute('data-points'))!;
  const rangesAt63 = await stepper.getByTestId('stepper-range').evaluateAll((els) => els.map((e) => e.getAttribute('data-blocks')));
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const fresh = await context.newPage();
  await fresh.goto('./');
  await expectAdapter(fresh);
  await fresh.getByTestId('open-result-input').setInputFiles(await file.path());
  const shared = fresh.getByTestId('shared-result');
  await expect(shared).toHaveAttribute('data-steps', '2');
  await expect(shared.getByTestId('shared-loss')).toHaveAttribute('data-points', lossPoints);
  const sharedStepper = shared.getByTestId('stepper');
  await expect(sharedStepper).toHaveAttribute('data-step', (await stepper.getAttribute('data-step'))!);
  await expect(sharedStepper).toHaveAttribute('data-invalid-rows', '0');
  await sharedStepper.getByTestId('stepper-t-slider').fill('63');
  expect(await sharedStepper.getByTestId('stepper-range').evaluateAll((els) => els.map((e) => e.getAttribute('data-blocks')))).toEqual(
    rangesAt63,
  );
  await saveScreenshot(fresh, testInfo, 'shared-result');
  // Link: the same result (its selections fit) from the address alone, in that fresh context.
  await page.getByTestId('share-link').click();
  const link = await page.getByTestId('share-link-url').inputValue();
  expect(link).toMatch(/\?result=[\w-]+$/);
  await fresh.goto(link);
  await expectAdapter(fresh);
  await expect(shared).toHaveAttribute('data-steps', '2');
  await expect(shared.getByTestId('shared-loss')).toHaveAttribute('data-points', lossPoints);
  await sharedStepper.getByTestId('stepper-t-slider').fill('63');
  expect(await sharedStepper.getByTestId('stepper-range').evaluateAll((els) => els.map((e) => e.getAttribute('data-blocks')))).toEqual(
    rangesAt63,
  );
  await context.close();
  await page.close();
});

test('a dense run: the stepper says so and starts the NSA counterpart', async ({ browser }) => {
  const page = await openPlayground(browser, `./#v=1&preset=tiny&${SMALL_BATCH}&model.attention=dense&train.steps=4&train.evalEvery=0`);
  // A config file that does not parse: its message stays until dismissed.
  await page.getByTestId('config-import-input').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{') });
  await expect(page.getByTestId('config-import-errors')).toContainText('bad.json');
  await page.getByTestId('config-import-dismiss').click();
  await expect(page.getByTestId('config-import-errors')).toHaveCount(0);
  await stepTo(page, 1);
  // Three quick S presses during a step: each is one step (queued, not dropped).
  await page.getByTestId('step-button').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('s');
  await expect(page.getByTestId('steps-done')).toHaveText('4', { timeout: 120_000 });
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('stepper-dense')).toContainText('dense attention');
  page.on('dialog', (d) => void d.accept()); // "reset the held run?" if its autosave is still being written
  await page.getByTestId('stepper-start-nsa').click();
  await expect(page.getByTestId('config-field-model.attention')).toHaveValue('nsa');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', /running|paused|done/, { timeout: 120_000 });
  await page.close();
});
