// The config side of the page: an invalid field blocks the start, a MoBA config's fields,
// explanation and (after one step) its stepper, a bad upload is refused without changing anything
// else, and the URL carries the config across a reload.
import { expandConfig, expectAdapter, saveScreenshot } from './page-helpers';
import { expect, type Page, test } from './test';

const field = (page: Page, path: string) => page.getByTestId(`config-field-${path}`);

test('an invalid config shows the message at the field and the run cannot start', async ({ page }, testInfo) => {
  await page.goto('./#v=1&preset=tiny');
  await expectAdapter(page);
  await expandConfig(page);
  await expect(page.getByTestId('run-button')).toBeEnabled();
  await field(page, 'model.dk').fill('15');
  await expect(page.getByTestId('config-error-model.dk')).toContainText('even');
  await expect(field(page, 'model.dk')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('run-button')).toBeDisabled();
  await expect(page.getByTestId('step-button')).toBeDisabled();
  await expect(page.getByTestId('start-blocked')).toContainText('model.dk');
  // The keyboard cannot start it either.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('Space');
  await page.keyboard.press('s');
  await page.waitForTimeout(500);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'idle');
  await saveScreenshot(page, testInfo, 'invalid-config');
  await field(page, 'model.dk').fill('16');
  await expect(page.getByTestId('config-error-model.dk')).toHaveCount(0);
  await expect(page.getByTestId('run-button')).toBeEnabled();

  // MoBA from the attention select: its fields sized from tiny's NSA (blocks of l′ = 8, k = n = 3),
  // an error at its own field, "How MoBA works" from those numbers, and after one step the stepper's
  // MoBA blocks with the reason for each (its own block forced, the others by score).
  await field(page, 'model.attention').selectOption('moba');
  await expect(field(page, 'model.moba.blockSize')).toHaveValue('8');
  await expect(field(page, 'model.moba.topK')).toHaveValue('3');
  await field(page, 'model.moba.topK').fill('9');
  await expect(page.getByTestId('config-error-model.moba.topK')).toContainText('more than the 8 blocks');
  await expect(page.getByTestId('run-button')).toBeDisabled();
  await field(page, 'model.moba.topK').fill('3');
  await expect(page.getByTestId('config-error-model.moba.topK')).toHaveCount(0);
  await expect(page.getByTestId('fact-keys-last')).toHaveText('24 in its blocks vs 64 dense (38%)');
  const explain = page.getByTestId('explain');
  await expect(explain).toHaveAttribute('data-attention', 'moba');
  await expect(explain).toContainText('How MoBA works');
  await expect(page.getByTestId('explain-reads')).toHaveText(
    'Query t reads 8 + 2·8 = 24 keys (at most k·B = 24), where dense attention reads t + 1 = 64.',
  );
  await page.getByTestId('step-button').click();
  await expect(page.getByTestId('steps-done')).toHaveText('1', { timeout: 120_000 });
  const stepper = page.getByTestId('stepper');
  await expect(stepper).toHaveAttribute('data-mechanism', 'moba', { timeout: 60_000 });
  await expect(stepper).toHaveAttribute('data-invalid-rows', '0');
  await expect(page.getByTestId('stepper-cfg')).toHaveText('MoBA B=8 k=3');
  // t = 63: block 7 (its own, forced) and two of blocks 0 … 6 by score, ranks 1 and 2.
  const rows = page.getByTestId('stepper-why-row');
  await expect(rows).toHaveCount(3);
  await expect(page.locator('[data-testid="stepper-why-row"][data-reason="forced"]')).toHaveAttribute('data-index', '7');
  await expect(rows.filter({ hasText: 'its own block' })).toContainText(
    'block 7 [56, 64) its own block: always read, cut at t (8 of 8 keys)',
  );
  expect((await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-rank')))).sort()).toEqual(['', '1', '2']);
  await saveScreenshot(page, testInfo, 'moba-step');
});

test('a bad upload is refused with a message and nothing else changes', async ({ page }, testInfo) => {
  await page.goto('./#v=1&preset=tiny');
  await expectAdapter(page);
  await expandConfig(page);
  await field(page, 'data.source').selectOption('upload');
  await expect(page.getByTestId('run-button')).toBeDisabled(); // no file yet
  const input = page.getByTestId('upload-input');
  const hashBefore = await page.evaluate(() => location.hash);

  await input.setInputFiles({ name: 'weights.txt', mimeType: 'text/plain', buffer: Buffer.from([0x41, 0x00, 0x01, 0x02, 0xff, 0x42]) });
  await expect(page.getByTestId('upload-error')).toContainText('binary');
  await input.setInputFiles({ name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) });
  await expect(page.getByTestId('upload-error')).toContainText('empty');
  await input.setInputFiles({ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(21 * 2 ** 20, 0x61) });
  await expect(page.getByTestId('upload-error')).toContainText('limit');
  await expect(page.getByTestId('upload-status')).toHaveCount(0);
  await expect(page.getByTestId('run-button')).toBeDisabled();
  expect(await page.evaluate(() => location.hash)).toBe(hashBefore);

  // A good file is taken; a bad one after it keeps the good one.
  const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}. ${'The quick brown fox jumps over the lazy dog. '.repeat(8)}`).join(
    '\n\n',
  );
  await input.setInputFiles({ name: 'good.txt', mimeType: 'text/plain', buffer: Buffer.from(text) });
  await expect(page.getByTestId('upload-status')).toContainText('good.txt');
  await expect(page.getByTestId('run-button')).toBeEnabled();
  await input.setInputFiles({ name: 'bad.txt', mimeType: 'text/plain', buffer: Buffer.from([0, 1, 2]) });
  await expect(page.getByTestId('upload-error')).toContainText('Still using good.txt');
  await expect(page.getByTestId('upload-status')).toContainText('good.txt');
  await expect(page.getByTestId('run-button')).toBeEnabled();
  await saveScreenshot(page, testInfo, 'bad-upload');
});

test('the URL carries the config: a reload and a fresh tab restore it', async ({ page, context }, testInfo) => {
  await page.goto('./');
  await expectAdapter(page);
  await expandConfig(page);
  await field(page, 'model.attention').selectOption('dense'); // NSA is the default: the link carries the change
  await field(page, 'train.steps').fill('123');
  await field(page, 'train.seed').fill('7');
  await expect.poll(() => page.evaluate(() => location.hash)).toContain('train.steps=123');
  const url = page.url();
  expect(url).toContain('model.attention=dense');

  await page.reload();
  await expectAdapter(page);
  await expect(field(page, 'model.attention')).toHaveValue('dense');
  await expect(field(page, 'train.steps')).toHaveValue('123');
  await expect(field(page, 'train.seed')).toHaveValue('7');
  await expect(page.getByTestId('steps-target')).toHaveText('123');

  const other = await context.newPage();
  await other.goto(url);
  await expectAdapter(other);
  await expect(field(other, 'train.steps')).toHaveValue('123');
  await expect(field(other, 'model.attention')).toHaveValue('dense');
  await saveScreenshot(other, testInfo, 'restored');
});

test('the recall preset trains its own task: task fields with messages at the field, one step from the config alone; accuracy against chance, the stepper labels its queries and answers', async ({
  page,
}, testInfo) => {
  // An evaluation after the step (2 validation batches: 2 × 4 sequences × 8 answers = 64 scored).
  await page.goto('./#v=1&preset=recall&train.evalEvery=1&train.evalBatches=2');
  await expectAdapter(page);
  await expandConfig(page);
  await expect(page.getByTestId('recall-task-fields')).toBeVisible();
  await expect(field(page, 'data.recall.pairs')).toHaveValue('10');
  // More pairs than distinct keys cannot be generated: the message sits at the field, Start is off.
  await field(page, 'data.recall.pairs').fill('17');
  await expect(page.getByTestId('config-error-data.recall.pairs')).toContainText('keys');
  await expect(page.getByTestId('run-button')).toBeDisabled();
  await expect(page.getByTestId('start-blocked')).toContainText('data.recall.pairs');
  await field(page, 'data.recall.pairs').fill('10');
  await expect(page.getByTestId('config-error-data.recall.pairs')).toHaveCount(0);
  // The worker builds the recall data from the config (no other hint): one step trains, with a finite
  // loss at the answer positions near ln(16 values) for an untrained model.
  await page.getByTestId('step-button').click();
  await expect(page.getByTestId('steps-done')).toHaveText('1', { timeout: 300_000 });
  await expect(page.getByTestId('run-status')).not.toHaveAttribute('data-status', 'error');
  // Untrained (init std 0.02): near-uniform over the 33-token vocabulary, ln 33 = 3.50.
  await expect.poll(async () => Number(await page.getByTestId('loss-latest').innerText()), { timeout: 60_000 }).toBeGreaterThan(3.0);
  expect(Number(await page.getByTestId('loss-latest').innerText())).toBeLessThan(4.0);
  // The task's accuracy chart: 0–100 %, the chance line (1/16) and chance ± 2·sqrt(p(1 − p)/n) with
  // n = 64 answers, drawn once the first evaluation is: its accuracy and NSA's needle selected.
  const accuracy = page.getByTestId('accuracy-chart');
  await expect(accuracy).toContainText('Answer accuracy');
  await expect(accuracy).toHaveAttribute('data-points', '2', { timeout: 60_000 });
  await expect(accuracy).toHaveAttribute('data-reference', String(1 / 16));
  const sigma = Math.sqrt(((1 / 16) * (15 / 16)) / 64);
  const band = (await accuracy.getAttribute('data-band'))!.split(',').map(Number);
  expect(band[0]).toBeCloseTo(1 / 16 - 2 * sigma, 9);
  expect(band[1]).toBeCloseTo(1 / 16 + 2 * sigma, 9);
  await expect(accuracy.locator('.recharts-reference-line')).toHaveCount(1);
  await expect(accuracy.locator('.recharts-reference-area')).toHaveCount(1);
  await expect(accuracy).toContainText('chance 6.3%');
  await expect(accuracy).toContainText('chance ± 2σ (n = 64)');
  const yTicks = await accuracy.locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').allTextContents();
  expect(yTicks[0]).toBe('0%');
  expect(yTicks.at(-1)).toBe('100%');

  // The stepper opens on the last query (t = 63: the query scored for the last answer), labels it,
  // says whether its pair's block was selected, and jumps answer to answer and query to query.
  const stepper = page.getByTestId('stepper');
  await expect(stepper).toHaveAttribute('data-loading', 'false', { timeout: 60_000 });
  const t = page.getByTestId('stepper-t');
  const role = page.getByTestId('stepper-query-role');
  await expect(t).toHaveAttribute('data-t', '63');
  await expect(role).toHaveText('query');
  await expect(page.getByTestId('stepper-recall')).toContainText(/Asks for the key stored at \d+; its value \(the answer\) is at \d+/);
  await expect(page.getByTestId('stepper-next-query')).toBeDisabled();
  await page.getByTestId('stepper-prev-answer').click();
  await expect(t).toHaveAttribute('data-t', '62');
  await expect(role).toHaveText('answer');
  await page.getByTestId('stepper-prev-query').click();
  await expect(t).toHaveAttribute('data-t', '61');
  await expect(role).toHaveText('query');
  await stepper.focus();
  await page.keyboard.press('Shift+Q');
  await expect(t).toHaveAttribute('data-t', '59');
  await page.keyboard.press('q');
  await expect(t).toHaveAttribute('data-t', '61');
  await page.keyboard.press('Home');
  await page.keyboard.press('a'); // the first answer: after the first query, at T + 1 − 2·8 + 1 = 50
  await expect(t).toHaveAttribute('data-t', '50');
  await expect(role).toHaveText('answer');
  // The selected ranges label the task's tokens (keys, values, queries, answers).
  await page.keyboard.press('End');
  const roles = await page
    .getByTestId('stepper-ranges')
    .locator('[data-role]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
  expect(roles).toContain('query');
  await saveScreenshot(page, testInfo, 'recall-step');
});
