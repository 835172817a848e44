// Main-thread responsiveness while the worker trains: requestAnimationFrame intervals and long
// tasks (> 50 ms) observed in the page between start() and stop().
import type { Page } from '@playwright/test';

export interface Responsiveness {
  seconds: number;
  frames: number;
  /** requestAnimationFrame intervals, ms. */
  frameMs: { p50: number; p95: number; p99: number; max: number };
  /** Share of intervals over 50 ms (a visible hitch). */
  slowFrameFraction: number;
  longTasks: { count: number; totalMs: number; maxMs: number };
}

interface Probe {
  intervals: number[];
  longTasks: number[];
  started: number;
  stop: boolean;
}

export async function startResponsivenessProbe(page: Page): Promise<void> {
  await page.evaluate(() => {
    const probe: Probe = { intervals: [], longTasks: [], started: performance.now(), stop: false };
    (window as unknown as { __nsaProbe: Probe }).__nsaProbe = probe;
    let last = performance.now();
    const tick = (t: number) => {
      probe.intervals.push(t - last);
      last = t;
      if (!probe.stop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
  });
}

export async function stopResponsivenessProbe(page: Page): Promise<Responsiveness> {
  const raw = await page.evaluate(() => {
    const probe = (window as unknown as { __nsaProbe: Probe }).__nsaProbe;
    probe.stop = true;
    return { intervals: probe.intervals.slice(1), longTasks: probe.longTasks, seconds: (performance.now() - probe.started) / 1000 };
  });
  const sorted = [...raw.intervals].sort((a, b) => a - b);
  const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    seconds: round(raw.seconds),
    frames: sorted.length,
    frameMs: { p50: round(q(0.5)), p95: round(q(0.95)), p99: round(q(0.99)), max: round(sorted.at(-1) ?? NaN) },
    slowFrameFraction: sorted.length ? Math.round((sorted.filter((x) => x > 50).length / sorted.length) * 1000) / 1000 : NaN,
    longTasks: {
      count: raw.longTasks.length,
      totalMs: round(raw.longTasks.reduce((a, b) => a + b, 0)),
      maxMs: round(Math.max(0, ...raw.longTasks)),
    },
  };
}
