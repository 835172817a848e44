// How often a chart redraws during a run. A recharts redraw costs a fixed ~10 ms plus per point
// on a slow machine (headless Chromium on SwiftShader, two busy cores: 100–150 ms a chart, its
// store's effect cascade included, 2026-11-29), and the browser's style/layout/paint comes on top.
// So each chart measures its own redraws and waits until they fit its share of the main thread (the
// loss chart, the one watched, gets more): drawing stays a small part of the main thread on any
// machine and at any run length, and a fast machine (redraws of 5 ms, or 20 ms for the loss chart)
// still redraws each chart 4 times per second. Redraws go through the redraw queue (one per frame,
// one task each).
import { useEffect, useRef, useState } from 'react';
import { flushSync } from 'react-dom';

import { nextFrameTask, RedrawQueue } from './redraw-queue';

/** 4 redraws per second at most: the worker sends 10 updates per second. */
export const MIN_REFRESH_MS = 250;
/**
 * A redraw every 5 s at least. With a cap of 2 s, the six charts of a run on SwiftShader (at the cap
 * all of them) took 29 % of the main thread, not their 20 %.
 */
export const MAX_REFRESH_MS = 5000;
/** Main-thread shares: the loss chart and each other chart (up to six): 8% + 6 × 2% = 20% at most. */
export const LOSS_SHARE = 0.08;
export const DEFAULT_SHARE = 0.02;
/** Weight of the newest redraw in the cost estimate. */
const COST_WEIGHT = 0.3;

/** Milliseconds between redraws of a chart whose redraws take `costMs`, to use `share` of the time. */
export function refreshInterval(costMs: number, share: number = DEFAULT_SHARE): number {
  if (!(share > 0 && share <= 1)) throw new RangeError(`share must be in (0, 1] (got ${share})`);
  return Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, Math.round(costMs / share)));
}

/** The running estimate of a redraw's cost after one that took `ms` (the first sets it). */
export function nextCost(prev: number | null, ms: number): number {
  return prev === null ? ms : (1 - COST_WEIGHT) * prev + COST_WEIGHT * ms;
}

const queue = new RedrawQueue(nextFrameTask);

/** Calls `run` in a task of its own, after every microtask queued before it (no timer clamping). */
function afterMicrotasks(run: () => void): void {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    run();
  };
  channel.port2.postMessage(null);
}

/** The revision shown before a chart's first redraw: nothing drawn yet. */
export const NOT_DRAWN = -1;

/**
 * The `revision` a chart shows (NOT_DRAWN at first): it follows `revision` through the redraw queue, at most every
 * refreshInterval(cost of its redraws, share), and not while the chart is off screen (after its first). The redraw renders
 * synchronously in its queue slot (flushSync), so each chart's drawing is a task of its own; it
 * is measured (`chart-redraw <key>` performance entries) and paces the next one.
 */
export function usePacedRevision(key: string, revision: number, visible: boolean, share: number = DEFAULT_SHARE): number {
  // Even the first drawing (recharts' mount is the costliest) waits for its queue slot.
  const [shown, setShown] = useState(NOT_DRAWN);
  // The revision a queued redraw shows: the latest committed one when its slot comes.
  const latest = useRef(revision);
  useEffect(() => {
    latest.current = revision;
  }, [revision]);
  const lastAt = useRef(-Infinity);
  const cost = useRef<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const wasVisible = useRef(visible);
  useEffect(() => {
    // A chart scrolled into view shows its data in the next queue slot, not after its pacing
    // interval (it showed what it had when it left the screen, e.g. "No data yet.").
    const appeared = visible && !wasVisible.current;
    wasVisible.current = visible;
    // The first drawing mounts the chart (recharts' costliest render): done at once, on screen
    // or not, so that it happens when the page loads rather than during a run.
    if (shown === revision || (!visible && shown !== NOT_DRAWN) || timer.current !== null) return;
    const wait = appeared ? 0 : lastAt.current + refreshInterval(cost.current ?? 0, share) - performance.now();
    timer.current = setTimeout(
      () =>
        queue.request(key, () => {
          timer.current = null;
          const start = performance.now();
          lastAt.current = start;
          flushSync(() => setShown(latest.current));
          // Recharts finishes over several microtasks (effects dispatch to its store, which re-renders
          // the chart, whose effects dispatch again): measure up to the next task, after all of them.
          // Up to the first microtask, as before, caught about half of it (2026-11-29, CPU profile).
          afterMicrotasks(() => {
            const m = performance.measure(`chart-redraw ${key}`, { start });
            cost.current = nextCost(cost.current, m.duration);
          });
        }),
      Math.max(0, wait),
    );
  }, [key, revision, shown, visible, share]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
      queue.cancel(key);
    },
    [key],
  );
  return shown;
}
