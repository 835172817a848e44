// Typing while the tiny NSA model trains on the software adapter: each key's latency (the Event
// Timing API's duration: input delay + handlers + the next paint) and the main thread's long
// tasks. Issue 13 asks for p95 ≤ 50 ms and no task over 100 ms; the figures go to
// test-results/nsa-e2e-typing.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect, test } from '@playwright/test';

import { openPlayground, waitForStatus } from './page-helpers';

interface Probe {
  keys: Map<number, number>;
  longTasks: number[];
}

const TEXT = 'The quick brown fox jumps over the lazy dog while the model trains. ';

test('typing stays responsive while training: key latency p95 ≤ 50 ms, no task over 100 ms', async ({ browser }, testInfo) => {
  const { page, errors } = await openPlayground(browser, './#v=1&preset=tiny&train.steps=2000&train.evalEvery=25');
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
      for (const e of list.getEntries() as Array<PerformanceEntry & { interactionId?: number }>) {
        const id = e.interactionId;
        if (id) probe.keys.set(id, Math.max(probe.keys.get(id) ?? 0, e.duration));
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
  // Keys under the 16 ms threshold have no entry: they count as 16 ms.
  const typed = await prompt.inputValue();
  const keys: number[] = [...r.keys, ...Array<number>(Math.max(0, typed.length - r.keys.length)).fill(16)].sort((a, b) => a - b);
  const q = (p: number) => keys[Math.min(keys.length - 1, Math.floor(p * keys.length))];
  const figures = {
    keys: keys.length,
    keyMs: { p50: q(0.5), p95: q(0.95), max: keys.at(-1) },
    longTasks: { count: r.longTasks.length, over100: r.longTasks.filter((d) => d > 100).length, maxMs: Math.max(0, ...r.longTasks) },
    stepsDone: Number(await page.getByTestId('steps-done').innerText()),
  };
  mkdirSync(testInfo.project.outputDir, { recursive: true });
  writeFileSync(join(testInfo.project.outputDir, 'nsa-e2e-typing.json'), JSON.stringify(figures, null, 2) + '\n');
  console.log(`[typing] ${JSON.stringify(figures)}`);
  expect(keys.length).toBeGreaterThan(50);
  expect(figures.keyMs.p95).toBeLessThanOrEqual(50);
  expect(figures.longTasks.over100).toBe(0);
  expect(errors).toEqual([]);
  await page.close();
});
