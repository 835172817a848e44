// Chart refresh pacing. Recharts spends roughly 0.03–0.05 ms per drawn point on a slow machine
// (headless Chromium on two busy cores), and the page draws nine series of up to ~900 points each
// (two per pixel column). Refreshing every 0.15 ms × drawn points keeps drawing to about a fifth
// of the main thread however long the run; a short run (few points) still updates at the worker's
// 10 per second.
import { useEffect, useRef, useState } from 'react';

export const MIN_REFRESH_MS = 100;
export const MAX_REFRESH_MS = 2000;
const MS_PER_POINT = 0.15;
const SERIES = 9;
const POINTS_PER_SERIES = 900;

/** Milliseconds between chart refreshes for a run with `steps` steps of metrics. */
export function refreshInterval(steps: number): number {
  const points = SERIES * Math.min(steps, POINTS_PER_SERIES);
  return Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, Math.round(MS_PER_POINT * points)));
}

/** `value`, passed on at most every `intervalMs`; the latest value always arrives. */
export function useThrottled<T>(value: T, intervalMs: number): T {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const wait = last.current + intervalMs - performance.now();
    const show = () => {
      last.current = performance.now();
      setShown(value);
    };
    if (wait <= 0) {
      show();
      return;
    }
    const id = setTimeout(show, wait);
    return () => clearTimeout(id);
  }, [value, shown, intervalMs]);
  return shown;
}
