// Issue 24, item 2, on the tiny preset: (1) Reset during a step in flight that does not end (the
// worker's thread blocked before the step, test hook) cancels it: the page drops the worker and its
// device after STEP_CANCEL_MS (3 s), and a new run reaches step 3 within 30 s (the time is reported).
// (2) A file that is not a checkpoint, given to "Continue from checkpoint…" while a run is paused,
// is refused as "not a checkpoint" before anything is asked, and the paused run stays (steps done
// unchanged); a real checkpoint asks first, and declining keeps the run.
import { readFileSync } from 'node:fs';

import { download, openPlayground, SMALL_BATCH, stepTo, trainingLosses, waitForStatus } from './page-helpers';
import { expect, type Page, test } from './test';

const HASH = `v=1&preset=tiny&${SMALL_BATCH}&train.steps=200`;

async function blockBeforeStep(page: Page, atStep: number, ms: number): Promise<void> {
  await page.evaluate((f) => (window as unknown as { __nsaTest: { fault(f: unknown): Promise<void> } }).__nsaTest.fault(f), {
    kind: 'block',
    atStep,
    ms,
  });
}

test('Reset during a step that does not end cancels it, and a new run reaches step 3 within 30 s', async ({ browser }, testInfo) => {
  const page = await openPlayground(browser, `./?testHooks=1#${HASH}`);
  await stepTo(page, 1); // the run is built (pipelines compiled) and autosaved at step 1
  await blockBeforeStep(page, 1, 300_000); // the next step never ends (the worker's thread spins)
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /running/);
  await page.waitForTimeout(500);
  await expect(page.getByTestId('steps-done')).toHaveText('1'); // the step is in flight, not done
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('reset-button').click();
  await waitForStatus(page, /idle/);

  const started = Date.now();
  await page.getByTestId('run-button').click();
  await expect.poll(async () => Number(await page.getByTestId('steps-done').innerText()), { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
  const seconds = (Date.now() - started) / 1000;
  await page.getByTestId('pause-button').click();
  await waitForStatus(page, /paused/);
  const losses = await trainingLosses(page);
  expect(losses.map(([s]) => s)).toEqual([...Array(losses.length).keys()]); // a new run: steps 0, 1, 2, … each once
  expect(losses.length).toBeGreaterThanOrEqual(3);
  expect(losses.every(([, l]) => Number.isFinite(Number(l)))).toBe(true);
  testInfo.annotations.push({ type: 'reset in flight', description: `Run after Reset → step 3 in ${seconds.toFixed(1)} s (bound 30 s)` });
  await page.close();
});

test('a file that is not a checkpoint is refused as such and the paused run stays; a checkpoint asks first', async ({ browser }) => {
  const page = await openPlayground(browser, `./#${HASH}`);
  await stepTo(page, 2);
  const dialogs: string[] = [];
  const onDialog = (d: { message(): string; dismiss(): Promise<void> }) => {
    dialogs.push(d.message());
    void d.dismiss();
  };
  page.on('dialog', onDialog);
  const input = page.getByTestId('checkpoint-input');
  const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24));
  for (const file of [
    { name: 'random.safetensors', mimeType: 'application/octet-stream', buffer: random },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('These are my notes, not weights.\n') },
  ]) {
    await input.setInputFiles(file);
    await expect(page.getByTestId('checkpoint-error')).toContainText(`${file.name}: not a checkpoint`);
    await expect(page.getByTestId('checkpoint-error')).not.toContainText('header length');
    await expect(page.getByTestId('steps-done')).toHaveText('2');
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'paused');
  }
  expect(dialogs).toEqual([]); // refused before anything is asked

  // A real checkpoint (this run's own, at step 2) replaces the held run only after asking: declined here.
  const checkpoint = readFileSync(await (await download(page, 'download-checkpoint')).path());
  await page.getByTestId('step-button').click(); // the held run moves on to step 3
  await expect(page.getByTestId('steps-done')).toHaveText('3');
  await waitForStatus(page, /paused/);
  await input.setInputFiles({ name: 'own.safetensors', mimeType: 'application/octet-stream', buffer: checkpoint });
  await expect.poll(() => dialogs.length).toBe(1);
  expect(dialogs[0]).toContain('Replace the current run (step 3)');
  await expect(page.getByTestId('steps-done')).toHaveText('3');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'paused');
  await expect(page.getByTestId('checkpoint-error')).toHaveCount(0);
  page.off('dialog', onDialog);
  await page.close();
});
