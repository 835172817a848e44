// The run library and the comparison view. Train the tiny preset (dense) 4 steps: the run appears
// in the library; rename it; Reset and "Undo reset" bring it back. A second run stepped to 2 is
// downloaded from the library (and exported for PyTorch as a zip, uploaded back at the end),
// deleted (Undo delete, then for good), uploaded back (a broken file
// is refused first, naming the file and the field, and nothing is added) and continued: its losses
// equal the uninterrupted run's bit for bit. Then "Same config, NSA" on the first run starts the
// NSA counterpart, and the comparison view overlays both (legend names both, the diff table lists
// model.attention).
import { readFileSync } from 'node:fs';

import {
  expectAdapter,
  expectNoAxeViolations,
  openPlayground,
  saveScreenshot,
  SMALL_BATCH,
  stepTo,
  trainingLosses,
  waitForStatus,
} from './page-helpers';
import { type Download, expect, type Locator, type Page, test } from './test';

test.describe.configure({ mode: 'serial' });

// Few steps, and one validation batch per evaluation: the claims (listed, best val loss, a resume past
// the warm-up equal to the uninterrupted run bit for bit, an evaluation before the pause and after it)
// hold at any length, and each step or evaluation batch costs CPU on the software adapter.
const STEPS = 4;
const PAUSE_AT = 2;
// Dense first (the presets default to NSA): its counterpart is then 'Same config, NSA'.
const HASH = `v=1&preset=tiny&${SMALL_BATCH}&model.attention=dense&train.steps=${STEPS}&train.warmupSteps=2&train.evalEvery=2&train.evalBatches=1`;

const rows = (page: Page) => page.getByTestId('library-row');
const rowById = (page: Page, id: string) => page.locator(`[data-testid="library-row"][data-run-id="${id}"]`);

async function savedAt(page: Page, step: number): Promise<void> {
  const line = page.getByTestId('autosave-status');
  await expect(line).toHaveAttribute('data-state', /^(saved|error)$/, { timeout: 120_000 });
  if ((await line.getAttribute('data-state')) === 'error') throw new Error(await line.innerText());
  await expect(line).toHaveAttribute('data-step', String(step));
}

async function downloadFrom(row: Locator): Promise<Download> {
  const [d] = (await Promise.all([row.page().waitForEvent('download'), row.getByTestId('library-download').click()])) as [Download, void];
  return d;
}

test('library round trip: listed, renamed, reset undone, downloaded, deleted (and undone), uploaded back and continued to the uninterrupted losses; compare with the NSA counterpart', async ({
  browser,
}, testInfo) => {
  const page = await openPlayground(browser, `./#${HASH}`);
  await expect(page.getByTestId('library-empty')).toBeVisible();

  // The uninterrupted run: listed with its steps and best validation loss.
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /done/);
  await savedAt(page, STEPS);
  const straight = await trainingLosses(page);
  await expect(rows(page)).toHaveCount(1);
  const first = rows(page).first();
  await expect(first).toHaveAttribute('data-steps', String(STEPS));
  await expect(first.getByTestId('library-steps')).toHaveText(`${STEPS} / ${STEPS}`);
  await expect(first.getByTestId('library-best-val')).toHaveText(/^\d+\.\d{4}$/);
  await expect(first).toContainText('tiny · 2 layers');
  const baselineId = (await first.getAttribute('data-run-id'))!;

  // Rename.
  await first.getByTestId('library-rename').click();
  await first.getByTestId('library-name-input').fill('baseline');
  await first.getByTestId('library-name-input').press('Enter');
  await expect(rowById(page, baselineId).getByTestId('library-name')).toHaveText('baseline');
  // Notes and tags (comma-separated; a repeat is dropped), kept with the entry.
  await rowById(page, baselineId).getByTestId('library-notes-edit').click();
  await rowById(page, baselineId).getByTestId('library-tags-input').fill('dense, baseline, dense');
  await rowById(page, baselineId).getByTestId('library-notes-input').fill('dense reference for the NSA run');
  await rowById(page, baselineId).getByTestId('library-notes-save').click();
  await expect(rowById(page, baselineId).getByTestId('library-tag')).toHaveText(['dense', 'baseline']);
  await expect(rowById(page, baselineId).getByTestId('library-notes')).toHaveText('dense reference for the NSA run');

  // Reset, then Undo reset: the run is back, done at its step.
  await page.getByTestId('reset-button').click();
  await waitForStatus(page, /idle/);
  await expect(page.getByTestId('library-undo')).toHaveAttribute('data-kind', 'reset');
  await page.getByTestId('library-undo-button').click();
  await waitForStatus(page, /done/);
  await expect(page.getByTestId('steps-done')).toHaveText(String(STEPS));
  await expect(page.getByTestId('library-undo')).toHaveCount(0);
  await page.getByTestId('reset-button').click();
  await waitForStatus(page, /idle/);

  // A second run, stepped to PAUSE_AT (autosaved there), then reset: two entries.
  await stepTo(page, PAUSE_AT);
  await savedAt(page, PAUSE_AT);
  await page.getByTestId('reset-button').click();
  await waitForStatus(page, /idle/);
  await expect(rows(page)).toHaveCount(2);
  const second = rows(page).first(); // newest first
  await expect(second).toHaveAttribute('data-steps', String(PAUSE_AT));
  const secondId = (await second.getAttribute('data-run-id'))!;

  // Download its checkpoint (the CLI's format, the page's file name).
  const saved = await downloadFrom(rowById(page, secondId));
  expect(saved.suggestedFilename()).toBe(`tiny-step${PAUSE_AT}.safetensors`);
  const bytes = readFileSync(await saved.path());

  // Delete, Undo delete, delete for good.
  await rowById(page, secondId).getByTestId('library-delete').click();
  await expect(rows(page)).toHaveCount(1);
  await expect(page.getByTestId('library-undo')).toHaveAttribute('data-kind', 'delete');
  await page.getByTestId('library-undo-button').click();
  await expect(rowById(page, secondId)).toHaveCount(1);
  await rowById(page, secondId).getByTestId('library-delete').click();
  await expect(rows(page)).toHaveCount(1);

  // Upload: a broken file is refused (file and field named, nothing added); the real one is added.
  const input = page.getByTestId('library-upload-input');
  await input.setInputFiles({ name: 'broken.safetensors', mimeType: 'application/octet-stream', buffer: bytes.subarray(0, 6) });
  await expect(page.getByTestId('library-error')).toContainText('broken.safetensors: header length');
  await expect(rows(page)).toHaveCount(1);
  await input.setInputFiles({ name: saved.suggestedFilename(), mimeType: 'application/octet-stream', buffer: bytes });
  await expect(page.getByTestId('library-error')).toHaveCount(0);
  await expect(rows(page)).toHaveCount(2);
  const imported = page.locator(`[data-testid="library-row"][data-name="tiny-step${PAUSE_AT}"]`);
  await expect(imported).toHaveAttribute('data-steps', String(PAUSE_AT));
  await expect(imported).toContainText('imported');

  // Continue it: paused at its step; finished, its losses equal the uninterrupted run's.
  await imported.getByTestId('library-continue').click();
  await waitForStatus(page, /paused/);
  await expect(page.getByTestId('steps-done')).toHaveText(String(PAUSE_AT));
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /done/);
  const resumed = await trainingLosses(page);
  expect(resumed).toEqual(straight);
  await savedAt(page, STEPS);
  await expect(imported).toHaveAttribute('data-steps', String(STEPS)); // autosaved into its own entry
  testInfo.annotations.push({ type: 'loss', description: `final loss ${resumed.at(-1)?.[1]} (uninterrupted ${straight.at(-1)?.[1]})` });

  // "Same config, NSA" on the baseline: the counterpart trains as a new entry; both are compared.
  const counterpart = rowById(page, baselineId).getByTestId('library-counterpart');
  await expect(counterpart).toHaveText('Same config, NSA');
  await counterpart.click();
  await waitForStatus(page, /done/);
  await savedAt(page, STEPS);
  await expect(rows(page)).toHaveCount(3);
  const panel = page.getByTestId('compare-panel');
  await expect(panel).toHaveAttribute('data-runs', '2');
  const legend = panel.getByTestId('compare-loss').locator('.recharts-legend-item-text');
  await expect(legend).toHaveCount(2);
  await expect(legend.nth(0)).toHaveText('baseline');
  await expect(legend.nth(1)).toHaveText(/^tiny NSA /);
  await expect(panel.getByTestId('compare-diff-row')).toHaveCount(1);
  await expect(panel.getByTestId('compare-diff-row')).toHaveAttribute('data-path', 'model.attention');
  await expect(panel.getByTestId('compare-diff-row')).toContainText('"dense"');
  await expect(panel.getByTestId('compare-gates').locator('.recharts-legend-item-text')).toHaveCount(3); // the NSA run's branches
  await expect(panel.getByTestId('compare-figures').locator('thead th')).toHaveCount(3); // a column per run
  await panel.scrollIntoViewIfNeeded();
  await saveScreenshot(page, testInfo, 'library-compare');
  // The tables fit their box or scroll inside it (issue 24: columns were cut off at 1400 px), and the
  // page with the library and the comparison open has no axe-core violation.
  const tables = await panel.locator('.compare-tables').evaluate((e) => ({
    right: e.getBoundingClientRect().right,
    scroll: e.scrollWidth,
    client: e.clientWidth,
    overflow: getComputedStyle(e).overflowX,
  }));
  expect(tables.right).toBeLessThanOrEqual((await panel.boundingBox())!.x + (await panel.boundingBox())!.width);
  expect(tables.scroll <= tables.client || tables.overflow === 'auto').toBe(true);
  await expectNoAxeViolations(page, testInfo, 'library-compare');

  // The continued run's PyTorch export (a zip of npm run export's directory) uploads back as a new
  // run at its step.
  const [zip] = (await Promise.all([page.waitForEvent('download'), imported.getByTestId('library-export-pytorch').click()])) as [
    Download,
    void,
  ];
  expect(zip.suggestedFilename()).toMatch(/-pytorch\.zip$/);
  await input.setInputFiles({ name: zip.suggestedFilename(), mimeType: 'application/zip', buffer: readFileSync(await zip.path()) });
  await expect(page.getByTestId('library-error')).toHaveCount(0);
  await expect(rows(page)).toHaveCount(4);
  await expect(rows(page).first()).toHaveAttribute('data-steps', String(STEPS));

  // A link to a run's view: Open puts ?run=<id> in the address bar; loading it opens that run.
  page.on('dialog', (d) => void d.accept()); // leaving a paused run: its autosave is in the library
  await rowById(page, baselineId).getByTestId('library-open').click();
  await expect.poll(() => page.evaluate(() => new URLSearchParams(location.search).get('run'))).toBe(baselineId);
  await page.reload();
  await expectAdapter(page);
  await expect(page.getByTestId('compare-panel')).toHaveAttribute('data-runs', '1');
  await expect(rowById(page, baselineId).getByTestId('library-compare')).toBeChecked();
  await page.close();
});
