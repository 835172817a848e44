// The benchmark view: NSA vs dense on the page's own adapter, in the worker — training fwd+bwd and
// decode per token at two context lengths, with the window, MoBA and DSA ticked beside them (MoBA
// skipped where its block does not fit the budget), keys read per query, the crossover line, and
// the JSON lines download in the schema npm run bench:attention prints. A bad context length is refused at the
// field; a training run in progress keeps the button disabled.
import { readFileSync } from 'node:fs';

import { download, openPlayground, stepTo } from './page-helpers';
import { expect, test } from './test';

test('benchmark NSA vs dense on this adapter: charts, crossover note, JSON lines download', async ({ browser }, testInfo) => {
  const page = await openPlayground(browser, './#v=1&preset=tiny&train.steps=50');
  const panel = page.getByTestId('bench-panel');
  await panel.scrollIntoViewIfNeeded();
  await page.getByTestId('bench-T').fill('32, 128');
  await expect(page.getByTestId('bench-field-error')).toContainText("'32' is not a context length from 64");
  await expect(page.getByTestId('bench-run')).toBeDisabled();
  await page.getByTestId('bench-T').fill('128, 64');
  await expect(page.getByTestId('bench-field-error')).toHaveCount(0);
  // On SwiftShader the other mechanisms start unticked; tick them (window, MoBA, DSA at NSA's budget).
  for (const m of ['window', 'moba', 'dsa']) {
    await expect(page.getByTestId(`bench-mechanism-${m}`)).not.toBeChecked();
    await page.getByTestId(`bench-mechanism-${m}`).check();
  }
  await page.getByTestId('bench-run').click();
  await expect(panel).toHaveAttribute('data-status', /^(done|error)$/, { timeout: 300_000 });
  await expect(page.getByTestId('bench-error')).toHaveCount(0);
  for (const id of ['bench-train-chart', 'bench-decode-chart', 'bench-keys-chart', 'bench-train-keys-chart'])
    await expect(page.getByTestId(id)).toHaveAttribute('data-points', '2');
  // MoBA's 64-token block does not fit T = 64's budget of 63 keys (its line says so); at 128 every mechanism has a point.
  await expect(page.getByTestId('bench-train-chart')).toHaveAttribute('data-mechanisms', 'nsa dense window moba dsa');
  await expect(page.getByTestId('bench-keys-chart')).toHaveAttribute('data-mechanisms', 'nsa dense window moba dsa');
  await expect(page.getByTestId('bench-decode-chart-crossover')).toContainText(/NSA (is not below dense|below dense from T = )/);
  await expect(page.getByTestId('bench-progress')).toContainText('4 measurements');

  const file = await download(page, 'bench-download');
  expect(file.suggestedFilename()).toMatch(/^nsa-bench_\d{4}-\d\d-\d\d\.jsonl$/);
  const lines = readFileSync(await file.path(), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          kind: string;
          T?: number;
          mechanism?: string;
          skipped?: string;
          reads_match_formula?: boolean;
          outputs_finite?: boolean;
        },
    );
  const mechanisms = ['mechanism_train', 'mechanism_train', 'mechanism_train'];
  expect(lines.map((l) => l.kind)).toEqual([
    'adapter',
    'config',
    'nsa_vs_dense',
    ...mechanisms,
    'nsa_vs_dense',
    ...mechanisms,
    'decode_config',
    'decode',
    'mechanism_decode',
    'mechanism_decode',
    'mechanism_decode',
    'decode',
    'mechanism_decode',
    'mechanism_decode',
    'mechanism_decode',
    'summary',
  ]);
  expect(lines.filter((l) => l.kind === 'decode').map((l) => [l.T, l.reads_match_formula, l.outputs_finite])).toEqual([
    [64, true, true],
    [128, true, true],
  ]);
  expect(
    lines.filter((l) => l.kind.startsWith('mechanism_')).map((l) => [l.kind, l.T, l.mechanism, l.skipped ? 'skipped' : l.outputs_finite]),
  ).toEqual([
    ['mechanism_train', 64, 'window', true],
    ['mechanism_train', 64, 'moba', 'skipped'],
    ['mechanism_train', 64, 'dsa', true],
    ['mechanism_train', 128, 'window', true],
    ['mechanism_train', 128, 'moba', true],
    ['mechanism_train', 128, 'dsa', true],
    ['mechanism_decode', 64, 'window', true],
    ['mechanism_decode', 64, 'moba', 'skipped'],
    ['mechanism_decode', 64, 'dsa', true],
    ['mechanism_decode', 128, 'window', true],
    ['mechanism_decode', 128, 'moba', true],
    ['mechanism_decode', 128, 'dsa', true],
  ]);
  expect(lines.filter((l) => l.kind === 'mechanism_decode' && !l.skipped).every((l) => l.reads_match_formula)).toBe(true);
  await panel.screenshot({ path: testInfo.outputPath('bench.png') });
  await testInfo.attach('bench', { path: testInfo.outputPath('bench.png'), contentType: 'image/png' });

  // While a run trains the benchmark waits: the button is disabled with the reason.
  await stepTo(page, 1);
  await page.getByTestId('run-button').click();
  await expect(page.getByTestId('bench-run')).toBeDisabled();
  await expect(panel).toContainText('Pause the training run to benchmark');
  await page.close();
});
