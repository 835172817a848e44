// Typing while the tiny NSA model trains on the software adapter: each key's latency (the Event
// Timing API's duration: input delay + handlers + the next paint) and the main thread's long
// tasks; the figures go to test-results/nsa-e2e-typing.json.
// What is asserted is the page's own part: the key's wait for the main thread plus its handlers
// (p95 ≤ 50 ms) and no main-thread task over 100 ms. The rest of a key's latency is the wait for
// the next painted frame, which on a 2-core host is set by the software adapter: SwiftShader runs
// the training step on the same cores as the software compositor (measured on this host: page's
// part p95 12-17 ms, whole latency p95 40 ms, 56 ms with one core kept busy, 64 ms on the CI host).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { openPlayground, waitForStatus } from './page-helpers';
import { expect, test } from './test';

// One key's latency split (Event Timing): inputDelay = waiting for the main thread,
// processing = the page's handlers, presentation = until the next frame is painted.
interface KeyTiming {
  duration: number;
  inputDelay: number;
  processing: number;
}

interface Probe {
  keys: Map<number, KeyTiming>;
  longTasks: number[];
}

const TEXT = 'The quick brown fox jumps over the lazy dog while the model trains. ';

test('typing stays responsive while training: the page answers a key within 50 ms (p95), no task over 100 ms', async ({
  browser,
}, testInfo) => {
  const page = await openPlayground(browser, './#v=1&preset=tiny&train.steps=2000&train.evalEvery=25');
  await page.getByTestId('run-button').click();
  await waitForStatus(page, /running/);
  // Warm-up: the first steps build pipelines and mount the charts' lines.
  await expect.poll(async () => Number(await page.getByTestId('steps-done').innerText()), { timeout: 120_000 }).toBeGreaterThanOrEqual(8);
  const prompt = page.getByTestId('gen-prompt-input');
  await expect(prompt).toBeEnabled();
  await prompt.click();
  await page.evaluate(() => {
    const probe: Probe = { keys: new Map(), longTasks: [] };
    (window as unknown as { __typing: Probe }).__typing = probe;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as Array<PerformanceEventTiming & { interactionId?: number }>) {
        const id = e.interactionId;
        if (!id) continue;
        const t: KeyTiming = {
          duration: e.duration,
          inputDelay: e.processingStart - e.startTime,
          processing: e.processingEnd - e.processingStart,
        };
        const seen = probe.keys.get(id);
        probe.keys.set(
          id,
          seen
            ? {
                duration: Math.max(seen.duration, t.duration),
                inputDelay: Math.max(seen.inputDelay, t.inputDelay),
                processing: seen.processing + t.processing,
              }
            : t,
        );
      }
    }).observe({ type: 'event', durationThreshold: 16, buffered: false } as PerformanceObserverInit);
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
  });
  const started = Date.now();
  while (Date.now() - started < 8_000) await prompt.pressSequentially(TEXT.slice(0, 12), { delay: 60 });
  await page.waitForTimeout(300); // the last keys' entries
  const r = await page.evaluate(() => {
    const p = (window as unknown as { __typing: Probe }).__typing;
    return { keys: [...p.keys.values()], longTasks: p.longTasks };
  });
  await page.getByTestId('pause-button').click();
  await waitForStatus(page, /paused/);
  // Keys under the 16 ms threshold have no entry: they count as 16 ms in total, 0 on the main thread.
  const typed = await prompt.inputValue();
  const missing = Math.max(0, typed.length - r.keys.length);
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const total = sorted([...r.keys.map((k) => k.duration), ...Array<number>(missing).fill(16)]);
  const mainThread = sorted([...r.keys.map((k) => k.inputDelay + k.processing), ...Array<number>(missing).fill(0)]);
  const q = (xs: number[], p: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]);
  const figures = {
    keys: total.length,
    keyMs: { p50: q(total, 0.5), p95: q(total, 0.95), max: Math.round(total.at(-1) ?? 0) },
    mainThreadMs: { p50: q(mainThread, 0.5), p95: q(mainThread, 0.95), max: Math.round(mainThread.at(-1) ?? 0) },
    longTasks: { count: r.longTasks.length, over100: r.longTasks.filter((d) => d > 100).length, maxMs: Math.max(0, ...r.longTasks) },
    stepsDone: Number(await page.getByTestId('steps-done').innerText()),
  };
  mkdirSync(testInfo.project.outputDir, { recursive: true });
  writeFileSync(join(testInfo.project.outputDir, 'nsa-e2e-typing.json'), JSON.stringify(figures, null, 2) + '\n');
  console.log(`[typing] ${JSON.stringify(figures)}`);
  expect(figures.keys).toBeGreaterThan(50);
  expect(figures.mainThreadMs.p95).toBeLessThanOrEqual(50);
  expect(figures.longTasks.over100).toBe(0);
  await page.close();
});
