// The page's checkpoint file (the CLI's checkpoint.safetensors) through the run controls: step the
// tiny preset a few steps, download the checkpoint, open the page again, continue from that file: the
// run is back paused at its step, with the file's config and losses so far. A broken file is
// refused next to the control, naming the file and the field; the next attempt clears the message.
// (That a continued run's losses equal the uninterrupted run's bit for bit is e2e/library.spec.ts's
// round trip, and in process tests/worker/run-checkpoint.test.ts and tests/train/resume.test.ts.)
import { readFileSync } from 'node:fs';

import { download, openPlayground, saveScreenshot, SMALL_BATCH, stepTo, trainingLosses, waitForStatus } from './page-helpers';
import { expect, test } from './test';

test.describe.configure({ mode: 'serial' });

const STEPS = 6;
// Paused at the end of the warm-up, after an evaluation (of one batch: its loss is not the claim).
const PAUSE_AT = 2;
const HASH = `v=1&preset=tiny&${SMALL_BATCH}&train.steps=${STEPS}&train.warmupSteps=2&train.evalEvery=2&train.evalBatches=1`;

test('download a checkpoint, open the page again, continue from it: paused at its step with its config and losses', async ({
  browser,
}, testInfo) => {
  let page = await openPlayground(browser, `./#${HASH}`);
  await expect(page.getByTestId('download-checkpoint')).toBeDisabled(); // no run yet

  // Stepped to PAUSE_AT and saved.
  await stepTo(page, PAUSE_AT);
  const before = await trainingLosses(page);
  expect(before.map(([s]) => s)).toEqual([...Array(PAUSE_AT).keys()]);
  const saved = await download(page, 'download-checkpoint');
  expect(saved.suggestedFilename()).toBe(`tiny-step${PAUSE_AT}.safetensors`);
  const bytes = readFileSync(await saved.path());

  // A new page (the worker and its run are gone) on the preset's own link, so that the
  // checkpoint's config visibly replaces its step count. (Not a hash change then a reload: the
  // page's "open the link as a new run?" question, and its prompt before leaving unsaved steps,
  // raced the reload.)
  await page.close();
  page = await openPlayground(browser, './#v=1&preset=tiny');
  const input = page.getByTestId('checkpoint-input');
  await input.setInputFiles({ name: 'broken.safetensors', mimeType: 'application/octet-stream', buffer: bytes.subarray(0, 6) });
  await expect(page.getByTestId('checkpoint-error')).toContainText('broken.safetensors: not a checkpoint');
  await waitForStatus(page, /idle/);

  await input.setInputFiles({ name: saved.suggestedFilename(), mimeType: 'application/octet-stream', buffer: bytes });
  await waitForStatus(page, /paused/);
  await expect(page.getByTestId('checkpoint-error')).toHaveCount(0);
  await expect(page.getByTestId('steps-done')).toHaveText(String(PAUSE_AT));
  await expect(page.getByTestId('config-field-train.steps')).toHaveValue(String(STEPS)); // the checkpoint's config
  await expect(page.getByTestId('run-button')).toHaveText(/Resume/);
  expect(await trainingLosses(page)).toEqual(before);
  await saveScreenshot(page, testInfo, 'checkpoint-resumed');
  await page.close();
});
