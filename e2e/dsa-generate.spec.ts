// Generation from a DSA run (docs/dsa-spec.md section 7) on the page: after two steps the panel is
// enabled (no DSA refusal), the worker's GPU decoder streams the tokens, and a generated token's
// details list, per layer, the tokens its query attended — min(k, t + 1) of the t + 1 positions —
// and the t + 1 indexer keys scored.
import { openPlayground, stepTo } from './page-helpers';
import { expect, test } from './test';

test('a DSA run generates on the GPU decoder; a token lists the tokens each layer attended', async ({ browser }, testInfo) => {
  // The tiny preset with DSA: k = 8 of the 64-token context, 2 indexer heads of 8, no warm-up.
  const dsa = 'model.dsa.indexHeads=2&model.dsa.indexDim=8&model.dsa.topK=8&model.dsa.warmupSteps=0&model.dsa.lossWeight=1';
  const page = await openPlayground(browser, `./#v=1&preset=tiny&model.attention=dsa&${dsa}&train.steps=4&train.evalEvery=0`);
  await expect(page.getByTestId('generation')).not.toContainText('does not decode DSA');
  await stepTo(page, 2);
  const gen = page.getByTestId('generation');
  const prompt = 'The ';
  await page.getByTestId('gen-prompt-input').fill(prompt);
  await page.getByTestId('gen-maxTokens').fill('6');
  await page.getByTestId('gen-start').click();
  await expect(gen).toHaveAttribute('data-status', /^(done|error)$/, { timeout: 300_000 });
  await expect(page.getByTestId('gen-error')).toHaveCount(0);
  await expect(page.getByTestId('gen-token')).toHaveCount(6);
  await expect(page.getByTestId('gen-decoder')).toContainText('GPU decoder (WebGPU, f32');

  await page.getByTestId('gen-token').last().click();
  const details = page.getByTestId('gen-details');
  await expect(page.getByTestId('gen-details-error')).toHaveCount(0);
  await expect(page.getByTestId('gen-token-dsa')).toBeVisible();
  const t = Number(await details.getAttribute('data-t'));
  expect(t).toBe(prompt.length - 1 + 5);
  const rows = page.getByTestId('gen-dsa-layer');
  expect(await rows.count()).toBe(2); // the tiny preset's layers
  for (const row of await rows.all()) {
    const [, tokens, read, index] = await row.locator('td').allInnerTexts();
    const picked = tokens.split(',').map((s) => Number(s.trim()));
    expect(picked.every((s) => Number.isInteger(s) && s >= 0 && s <= t)).toBe(true);
    expect(picked.length).toBe(Math.min(8, t + 1));
    expect(read).toBe(`${picked.length} of ${t + 1}`);
    expect(Number(index)).toBe(t + 1);
  }
  await gen.screenshot({ path: testInfo.outputPath('dsa-generation.png') });
  await testInfo.attach('dsa-generation', { path: testInfo.outputPath('dsa-generation.png'), contentType: 'image/png' });
  await page.close();
});
