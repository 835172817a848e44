// Re-renders the calling component every `intervalMs` (null: never), for clocks that read the
// time during render. Only the component that ticks re-renders, not the page.
import { useEffect, useState } from 'react';

export function useTick(intervalMs: number | null): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (intervalMs === null) return;
    const id = setInterval(() => setTick((t) => t + 1), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs]);
  return tick;
}
