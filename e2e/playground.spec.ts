// The playground for real, on one page that trains once: the built app in headless Chromium, WebGPU
// on SwiftShader (or the system GPU with NSA_E2E_GPU=system), training in the dedicated worker.
// The tests run in order on the same page (SwiftShader compiles each pipeline for seconds, so a
// run is built as few times as possible); a failure skips the rest.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { forcedBlocks } from '../src/definitions/nsa-blocks';
import { METRICS_HEADER } from '../src/train/metrics-csv';
import { preset } from '../src/train/presets/presets';
import { type RunArtifact, writeArtifact } from './artifact';
import { goldenFor, goldenKey, missingGoldenMessage, RECORD_GOLDEN, recordGolden } from './golden';
import { E2E_PROFILE, EXPECTED_ADAPTER, GPU_MODE } from './gpu-mode';
import { openPlayground, saveScreenshot } from './page-helpers';
import { startResponsivenessProbe, stopResponsivenessProbe } from './responsiveness';
import { type Download, expect, type Page, test } from './test';

test.describe.configure({ mode: 'serial' });

const P = E2E_PROFILE;
/** The fields of the CLI's heartbeat.jsonl lines (src/train/types.ts Heartbeat), in order. */
const HEARTBEAT_FIELDS = ['ts', 'iso', 'step', 'msg', 'phase', 'loss', 'toks_per_s', 'lr', 'grad_norm', 'gpu_mem_bytes'];

const ARTIFACT_FILE = 'nsa-e2e-run.json';

let page: Page;
const artifact: RunArtifact = { date: new Date().toISOString(), gpuMode: GPU_MODE, profile: P.name, configHash: P.hash };

const status = () => page.getByTestId('run-status');
const stepsDone = async () => Number(await page.getByTestId('steps-done').innerText());

async function failIfError(): Promise<void> {
  if ((await status().getAttribute('data-status')) === 'error')
    throw new Error(`training failed: ${await page.getByTestId('run-error').innerText()}`);
}

async function download(testId: string): Promise<string> {
  const [d] = (await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()])) as [Download, void];
  const path = await d.path();
  return readFileSync(path, 'utf8');
}

test.beforeAll(async ({ browser }) => {
  page = await openPlayground(browser, `./?testHooks=1#${P.hash}`);
});

test.afterAll(async ({}, testInfo) => {
  writeArtifact(join(testInfo.project.outputDir, ARTIFACT_FILE), artifact);
  console.log(`[e2e] run artifact: ${JSON.stringify({ ...artifact, losses: artifact.losses?.length })}`);
  await page.close();
});

test('names the WebGPU adapter the worker trains on, and loads the config from the URL', async ({}, testInfo) => {
  await expect(page.getByTestId('adapter-name')).toHaveText(EXPECTED_ADAPTER);
  if (GPU_MODE === 'swiftshader') {
    await expect(page.getByTestId('adapter-architecture')).toHaveText('swiftshader');
    await expect(page.getByTestId('adapter-kind')).toHaveText('software');
  } else {
    // A system-GPU run that fell back to software would record misleading numbers.
    const kind = await page.getByTestId('adapter-kind').innerText();
    expect(
      kind,
      `NSA_E2E_GPU=system, but Chromium gave a software adapter (${await page.getByTestId('adapter-name').innerText()}): check the GPU driver and Vulkan`,
    ).toBe('hardware');
  }
  artifact.adapter = {
    name: await page.getByTestId('adapter-name').innerText(),
    vendor: await page.getByTestId('adapter-vendor').innerText(),
    architecture: await page.getByTestId('adapter-architecture').innerText(),
    kind: await page.getByTestId('adapter-kind').innerText(),
  };
  await expect(page.getByTestId('config-field-model.attention')).toHaveValue('nsa');
  await expect(page.getByTestId('config-field-train.steps')).toHaveValue(String(P.steps));
  await expect(page.getByTestId('steps-target')).toHaveText(String(P.steps));
  await expect(page.getByTestId('run-button')).toBeEnabled();
  // The adapter's limits fold into its line behind "details" (issue 24).
  await expect(page.getByTestId('adapter-details')).toBeHidden();
  await page.getByTestId('adapter-details-toggle').click();
  await expect(page.getByTestId('adapter-limit-maxBufferSize')).toBeVisible();
  await page.getByTestId('adapter-details-toggle').click();
  await expect(page.getByTestId('adapter-details')).toBeHidden();
  // Social previews need absolute URLs: og:url, og:image and twitter:image from NSA_SITE_URL at build time.
  for (const meta of ['meta[property="og:image"]', 'meta[name="twitter:image"]'])
    expect(await page.locator(meta).getAttribute('content'), meta).toMatch(/^https?:\/\/[^/]+\/(.+\/)?social-preview\.png$/);
  expect(await page.locator('meta[property="og:url"]').getAttribute('content')).toMatch(/^https?:\/\/[^/]+\/(.+\/)?$/);
  await saveScreenshot(page, testInfo, 'ready');
});

test('trains with heartbeats and tokens/s; pause keeps the step count, resume finishes; the loss falls', async ({}, testInfo) => {
  const t0 = Date.now();
  await page.getByTestId('run-button').click();
  await expect(page.getByTestId('config-field-train.steps')).toBeDisabled(); // the config is locked during a run
  await expect(status()).toHaveAttribute('data-status', /^(running|error)$/, { timeout: 300_000 }); // init compiles every pipeline
  await failIfError();
  const initSeconds = (Date.now() - t0) / 1000;

  // Heartbeats: a step phase, a fresh age, the step count moving.
  await expect(page.getByTestId('heartbeat-phase')).toHaveText('step', { timeout: 120_000 });
  await startResponsivenessProbe(page);
  const t1 = Date.now();
  await expect.poll(stepsDone, { timeout: 300_000 }).toBeGreaterThanOrEqual(P.pauseAfter);
  await expect.poll(async () => Number(await page.getByTestId('heartbeat-age').getAttribute('data-age'))).toBeLessThan(30);
  await expect(page.getByTestId('tokens-per-second')).toHaveText(/^[\d,.]+$/);
  await expect(page.getByTestId('elapsed')).not.toHaveText('0:00');
  await expect(page.getByTestId('eta')).toHaveText(/^\d+:\d\d$/);

  // Pause mid-run: the worker stops between steps and keeps the run.
  await page.getByTestId('pause-button').click();
  await expect(status()).toHaveAttribute('data-status', /^(paused|error)$/, { timeout: 120_000 });
  await failIfError();
  const pausedAt = await stepsDone();
  expect(pausedAt).toBeLessThan(P.steps);
  await expect(page.getByTestId('heartbeat-phase')).toHaveText('paused');
  await page.waitForTimeout(1500);
  expect(await stepsDone()).toBe(pausedAt);

  await expect(page.getByTestId('run-button')).toHaveText(/Resume/);
  await page.getByTestId('run-button').click();
  await expect(status()).toHaveAttribute('data-status', /^(done|error)$/, { timeout: 540_000 });
  await failIfError();
  const trainSeconds = (Date.now() - t1) / 1000;
  artifact.responsiveness = await stopResponsivenessProbe(page);
  await expect(page.getByTestId('heartbeat-phase')).toHaveText('done');
  expect(await stepsDone()).toBe(P.steps);
  await expect(page.getByTestId('loss-latest')).toHaveAttribute('data-step', String(P.steps - 1));

  const first = Number(await page.getByTestId('loss-first').innerText());
  const last = Number(await page.getByTestId('loss-latest').innerText());
  expect(first).toBeGreaterThan(4.5); // byte-level loss starts near ln 256 ≈ 5.55
  expect(first).toBeLessThan(6.5);
  expect(last).toBeLessThan(first - P.minLossDrop);
  expect(Number((await page.getByTestId('val-loss-latest').innerText()) || NaN)).toBeLessThan(first);
  await expect(page.getByTestId('gpu-memory')).toHaveText(/^\d+(\.\d)? (KiB|MiB|GiB)$/);
  artifact.timings = { initSeconds, trainSeconds, pausedAt };
  const summary = `loss ${first} → ${last} in ${P.steps} steps (paused at ${pausedAt}); init ${initSeconds.toFixed(1)} s, training ${trainSeconds.toFixed(1)} s; frames p50/p95/max ${JSON.stringify(artifact.responsiveness.frameMs)} ms, long tasks ${JSON.stringify(artifact.responsiveness.longTasks)}`;
  testInfo.annotations.push({ type: 'run', description: summary });
  console.log(`[e2e] ${summary}`);
  await saveScreenshot(page, testInfo, 'trained-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await saveScreenshot(page, testInfo, 'trained-dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

test('downloads use the CLI formats, and the loss at the last step matches the golden value of this adapter', async ({}, testInfo) => {
  const csv = (await download('download-metrics.csv')).trim().split('\n');
  expect(csv[0]).toBe(METRICS_HEADER);
  const rows = csv.slice(1).map((l) => l.split(',').map((x) => (x === '' ? null : Number(x))));
  const train = rows.filter((r) => r[1] !== null).map((r) => ({ step: r[0]!, loss: r[1]! }));
  const val = rows.filter((r) => r[2] !== null).map((r) => ({ step: r[0]!, valLoss: r[2]! }));
  expect(train.map((r) => r.step)).toEqual([...Array(P.steps).keys()]);
  const evalEvery = Number(new URLSearchParams(P.hash).get('train.evalEvery'));
  const evalSteps = [...Array(Math.floor(P.steps / evalEvery)).keys()].map((i) => (i + 1) * evalEvery);
  if (evalSteps.at(-1) !== P.steps) evalSteps.push(P.steps); // the last step is always evaluated
  expect(val.map((r) => r.step)).toEqual(evalSteps);
  artifact.losses = train;
  artifact.valLosses = val;
  const tps = rows.filter((r) => r[5] !== null).map((r) => r[5]!);
  artifact.tokensPerSecond = { last: tps.at(-1)!, mean: tps.reduce((a, b) => a + b, 0) / tps.length };
  // An NSA run: every training row carries the three gate means, each in (0, 1).
  const gates = rows.filter((r) => r[1] !== null).map((r) => r.slice(8, 11));
  for (const g of gates) for (const v of g) expect(v !== null && v > 0 && v < 1).toBe(true);

  const beats = (await download('download-heartbeat.jsonl'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const b of beats) expect(Object.keys(b)).toEqual(HEARTBEAT_FIELDS);
  const phases = beats.map((b) => b.phase);
  expect(phases[0]).toBe('init');
  expect(phases).toContain('step');
  expect(phases).toContain('eval');
  expect(phases).toContain('paused');
  expect(phases.at(-1)).toBe('done');
  const steps = beats.filter((b) => b.phase === 'step').map((b) => b.step as number);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));

  const config = JSON.parse(await download('download-config.json')) as {
    model: { attention: string };
    train: { steps: number; seed: number };
    stepsDone: number;
  };
  expect(config.model.attention).toBe('nsa');
  expect(config.train.steps).toBe(P.steps);
  expect(config.stepsDone).toBe(P.steps);

  // The golden loss: same seed, same kernels, same adapter, same loss (within the stated tolerance).
  const at = train.at(-1)!;
  const adapter = artifact.adapter!;
  const key = goldenKey(P.name, adapter);
  const golden = goldenFor(key);
  artifact.golden = {
    key,
    step: at.step,
    loss: at.loss,
    expected: golden?.loss ?? null,
    tolerance: golden?.tolerance ?? null,
    recorded: false,
  };
  if (RECORD_GOLDEN) {
    const entry = recordGolden(key, GPU_MODE, { hash: P.hash, step: at.step, loss: at.loss, adapterName: adapter.name });
    artifact.golden = { ...artifact.golden, tolerance: entry.tolerance, recorded: true };
    console.log(`[e2e] recorded golden ${key}: step ${at.step} loss ${at.loss} (tolerance ${entry.tolerance}); commit e2e/golden.json`);
    return;
  }
  // No golden for this adapter: fail (the loss is in the artifact), never pass unchecked.
  if (!golden) throw new Error(missingGoldenMessage(key, GPU_MODE, at, join(testInfo.project.outputDir, ARTIFACT_FILE)));
  expect(golden.hash, 'the golden was recorded for another config').toBe(P.hash);
  expect(at.step).toBe(golden.step);
  expect(Math.abs(at.loss - golden.loss), `loss ${at.loss} vs golden ${golden.loss} (${key}) at step ${at.step}`).toBeLessThanOrEqual(
    golden.tolerance,
  );
});

test('charts: every series drawn, smoothing changes the smoothed curve, log scale changes the axis', async ({}, testInfo) => {
  const loss = page.getByTestId('loss-chart');
  await page.getByTestId('charts-panel').scrollIntoViewIfNeeded(); // charts off screen skip their redraws
  for (const id of ['loss-chart', 'tokens-chart', 'lr-chart', 'gradnorm-chart', 'gates-chart'])
    await expect(page.getByTestId(id).locator('.recharts-line-curve').first()).toBeVisible();
  await expect(loss.locator('.recharts-line-curve')).toHaveCount(3); // raw, smoothed, validation
  await expect(page.getByTestId('gates-chart').locator('.recharts-line-curve')).toHaveCount(3);
  // The keys the NSA kernels counted (all branches, then each), under dense attention's (T + 1)/2.
  // Drawn, not 'visible': the tiny preset forces the local block, so each count is a flat line (a
  // path of zero height, which Playwright calls hidden).
  await expect(page.getByTestId('keys-chart').locator('.recharts-line-curve')).toHaveCount(4);
  await expect(page.getByTestId('keys-chart').locator('.recharts-line-curve').first()).toHaveAttribute('d', /^M[\d.]+,[\d.]+L/);
  await expect(page.getByTestId('keys-chart')).toHaveAttribute('data-reference', /^\d+(\.5)?$/);
  const path = (id: string) => loss.locator(`.series-${id} .recharts-line-curve`).getAttribute('d');
  const rawPath = await path('train-raw');
  const slider = page.getByTestId('smoothing-slider');
  await slider.fill('0');
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.00');
  await expect.poll(() => path('train')).toBe(rawPath); // no smoothing: the smoothed curve is the raw one
  await slider.fill('0.9');
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.90');
  await expect.poll(() => path('train')).not.toBe(rawPath);
  expect(await path('train-raw')).toBe(rawPath);
  // Label and position of each y tick: a log axis places the same round values differently.
  const ticks = () =>
    loss
      .locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')
      .evaluateAll((els) => els.map((e) => `${e.textContent ?? ''}@${Math.round(Number(e.getAttribute('y')))}`));
  await expect.poll(async () => (await ticks()).length).toBeGreaterThan(2);
  const linear = await ticks();
  await page.getByTestId('log-scale').check();
  await expect.poll(ticks).not.toEqual(linear);
  await saveScreenshot(page, testInfo, 'charts-log');
  await page.getByTestId('log-scale').uncheck();
});

test('selection stepper: every range valid, forced blocks present, keyboard steps t', async ({}, testInfo) => {
  const stepper = page.getByTestId('stepper');
  await expect(stepper).toHaveAttribute('data-loading', 'false', { timeout: 60_000 });
  await expect(stepper).toHaveAttribute('data-step', String(P.steps - 1)); // follows the newest snapshot
  const model = preset(P.preset).model;
  const nsa = model.nsa!;
  const T = Number(await page.getByTestId('stepper-t-slider').getAttribute('max')) + 1;

  // Every snapshot, layer and group: no invalid row (the stepper checks ranges and forced blocks).
  for (const layer of [...Array(model.nLayers).keys()].map(String)) {
    for (const group of [...Array(model.nKvGroups).keys()].map(String)) {
      await page.getByTestId('stepper-layer').selectOption(layer);
      await page.getByTestId('stepper-group').selectOption(group);
      await expect(stepper).toHaveAttribute('data-loading', 'false');
      await expect(stepper).toHaveAttribute('data-layer', layer);
      await expect(stepper).toHaveAttribute('data-group', group);
      await expect(stepper).toHaveAttribute('data-invalid-rows', '0');
    }
  }

  // Walk t with the keyboard over the whole sequence, checking the ranges shown at each t.
  await stepper.focus();
  await page.keyboard.press('Home');
  for (let t = 0; t < T; t++) {
    await expect(page.getByTestId('stepper-t')).toHaveAttribute('data-t', String(t));
    const ranges = await page.getByTestId('stepper-range').evaluateAll((els) =>
      els.map((e) => ({
        start: Number(e.getAttribute('data-start')),
        end: Number(e.getAttribute('data-end')),
        blocks: (e.getAttribute('data-blocks') ?? '').split(',').map(Number),
      })),
    );
    const forcedShown = (
      await page.getByTestId('stepper-forced').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-block'))))
    ).sort((a, b) => a - b);
    expect(ranges.length, `t=${t}`).toBeGreaterThan(0);
    for (const r of ranges) {
      expect(r.start, `t=${t} range [${r.start}, ${r.end})`).toBeGreaterThanOrEqual(0);
      expect(r.start, `t=${t}`).toBeLessThan(r.end);
      expect(r.end, `t=${t}`).toBeLessThanOrEqual(t + 1);
    }
    const selected = new Set(ranges.flatMap((r) => r.blocks));
    const forced = forcedBlocks(t, nsa);
    for (const j of forced) expect(selected.has(j), `t=${t}: forced block ${j} selected`).toBe(true);
    expect(forcedShown, `t=${t}: forced badges`).toEqual([...forced].sort((a, b) => a - b));
    if (t < T - 1) await page.keyboard.press('ArrowRight');
  }
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByTestId('stepper-t')).toHaveAttribute('data-t', String(T - 2));

  // Step back through the snapshots taken during training.
  const before = await stepper.getAttribute('data-step');
  await page.keyboard.press('[');
  await expect(stepper).not.toHaveAttribute('data-step', before!);
  await expect(stepper).toHaveAttribute('data-invalid-rows', '0');
  await stepper.screenshot({ path: testInfo.outputPath('stepper.png') });
  await testInfo.attach('stepper', { path: testInfo.outputPath('stepper.png'), contentType: 'image/png' });
});

test('generation streams text from the trained weights; a token opens its decode selection in the stepper', async ({}, testInfo) => {
  const gen = page.getByTestId('generation');
  const prompt = 'The ';
  await page.getByTestId('gen-prompt-input').fill(prompt);
  await page.getByTestId('gen-maxTokens').fill('16');
  await page.getByTestId('gen-start').click();
  await expect(gen).toHaveAttribute('data-status', /^(done|error)$/, { timeout: 120_000 });
  await expect(page.getByTestId('gen-error')).toHaveCount(0);
  await expect(page.getByTestId('gen-token')).toHaveCount(16);
  // Decoded on the GPU: the worker's GPU decoder on the run's adapter.
  await expect(page.getByTestId('gen-decoder')).toContainText('GPU decoder (WebGPU, f32');
  const text = await page.getByTestId('gen-output').innerText();
  expect(text.trim().length).toBeGreaterThan(0);
  artifact.generation = { prompt, text, tokens: 16 };
  // The first generated token: the stepper shows the selections of its query while decoding.
  await page.getByTestId('gen-token').first().click();
  const stepper = page.getByTestId('stepper');
  await expect(stepper).toHaveAttribute('data-source', 'decode');
  await expect(stepper).toHaveAttribute('data-invalid-rows', '0');
  await expect(page.getByTestId('stepper-t')).toHaveAttribute('data-t', String(prompt.length - 1));
  await expect(page.getByTestId('stepper-range').first()).toBeVisible();
  await gen.screenshot({ path: testInfo.outputPath('generation.png') });
  await testInfo.attach('generation', { path: testInfo.outputPath('generation.png'), contentType: 'image/png' });
});

test('reset clears the run and unlocks the config', async ({}, testInfo) => {
  page.once('dialog', (d) => void d.accept()); // the confirmation, should steps be unsaved
  await page.getByTestId('reset-button').click();
  await expect(status()).toHaveAttribute('data-status', 'idle');
  await expect(page.getByTestId('steps-done')).toHaveText('0');
  await expect(page.getByTestId('loss-latest')).toHaveText('–');
  await page.getByTestId('loss-chart').scrollIntoViewIfNeeded(); // charts off screen skip their redraws
  await expect(page.getByTestId('loss-chart')).toHaveAttribute('data-points', '0');
  await expect(page.getByTestId('stepper-empty')).toBeVisible();
  await expect(page.getByTestId('download-metrics.csv')).toBeDisabled();
  await expect(page.getByTestId('config-field-train.steps')).toBeEnabled();
  await saveScreenshot(page, testInfo, 'reset');
});

test('keyboard runs, pauses and steps', async ({}, testInfo) => {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('Space'); // run
  await expect(status()).toHaveAttribute('data-status', /^(running|error)$/, { timeout: 300_000 });
  await failIfError();
  await expect.poll(stepsDone, { timeout: 300_000 }).toBeGreaterThanOrEqual(1);
  await page.keyboard.press('Space'); // pause
  await expect(status()).toHaveAttribute('data-status', 'paused', { timeout: 120_000 });
  const n = await stepsDone();
  await page.keyboard.press('s'); // one step
  await expect.poll(stepsDone, { timeout: 120_000 }).toBe(n + 1);
  await expect(status()).toHaveAttribute('data-status', 'paused');
  await expect(page.getByTestId('stall-banner')).toHaveCount(0);

  await page.keyboard.press('Space'); // run again
  await expect(status()).toHaveAttribute('data-status', /^(running|done)$/, { timeout: 120_000 });
  await page.keyboard.press('Space'); // pause (or nothing, on a finished run)
  await expect(status()).toHaveAttribute('data-status', /^(paused|done)$/, { timeout: 120_000 });
  await saveScreenshot(page, testInfo, 'keyboard');
  // The stall watchdog's banner and the restart from the last autosave: e2e/recovery.spec.ts.
});
