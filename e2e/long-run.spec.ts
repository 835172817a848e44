// A 10,000-step run's worth of metrics streamed into the page at the worker's rate (10 updates per
// second, 100 steps each), without GPU time: the charts stay within their point budget and the
// main thread keeps drawing frames. The numbers go to test-results/nsa-e2e-long-run.json.
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { writeArtifact } from './artifact';
import { GPU_MODE } from './gpu-mode';
import { collectErrors, expectAdapter, saveScreenshot } from './page-helpers';
import { startResponsivenessProbe, stopResponsivenessProbe } from './responsiveness';

const STEPS = 10_000;
const PER_UPDATE = 100;
/** Decimation bound per series (src/ui/charts/decimate.ts). */
const MAX_POINTS = 1500;

test('a 10,000-step run keeps every series within 1500 points and the page drawing frames', async ({ page }, testInfo) => {
  const errors = collectErrors(page);
  await page.goto('./?testHooks=1#v=1&preset=tiny&model.attention=nsa');
  await expectAdapter(page);
  await startResponsivenessProbe(page);
  await page.evaluate(([n, k]) => (window as unknown as { __nsaTest: { simulateRun(n: number, k: number): Promise<void> } }).__nsaTest.simulateRun(n, k), [STEPS, PER_UPDATE]);
  await expect(page.getByTestId('gates-chart')).toBeVisible();
  await page.waitForTimeout(500); // the deferred chart render of the last update
  const r = await stopResponsivenessProbe(page);
  writeArtifact(join(testInfo.project.outputDir, 'nsa-e2e-long-run.json'), {
    date: new Date().toISOString(),
    gpuMode: GPU_MODE,
    profile: `synthetic ${STEPS} steps, ${PER_UPDATE} per update at 10 updates/s`,
    configHash: '',
    responsiveness: r,
  });
  console.log(`[e2e] long run: frames p50/p95/p99/max ${JSON.stringify(r.frameMs)} ms, ${r.frames} frames in ${r.seconds} s, long tasks ${JSON.stringify(r.longTasks)}`);

  // Decimated: raw + smoothed + validation ≤ 3 × 1500 on the loss chart, ≤ 1500 per other series.
  const points = async (id: string) => Number(await page.getByTestId(id).getAttribute('data-points'));
  expect(await points('loss-chart')).toBeLessThanOrEqual(3 * MAX_POINTS);
  expect(await points('loss-chart')).toBeGreaterThan(2 * MAX_POINTS - 20);
  for (const id of ['tokens-chart', 'lr-chart', 'gradnorm-chart']) expect(await points(id)).toBeLessThanOrEqual(MAX_POINTS);
  expect(await points('gates-chart')).toBeLessThanOrEqual(3 * MAX_POINTS);
  await expect(page.getByTestId('steps-done')).toHaveText(String(STEPS));
  // The page kept animating: at least half the frames a 60 Hz display would show over the run.
  expect(r.frames).toBeGreaterThan(r.seconds * 30);
  await saveScreenshot(page, testInfo, 'long-run');
  expect(errors).toEqual([]);
});
