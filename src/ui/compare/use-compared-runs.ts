// The runs picked for the comparison, in pick order, each with its config and curves: the live
// run's from the page's state (it may not be saved yet), the others' from their stored histories
// (loaded on demand). A picked run whose history is still loading is left out until it arrives.
import { useEffect, useMemo } from 'react';

import type { ComparedRun } from '../../train/compare';
import { loadHistories } from '../library/library-actions';
import { useLibrary } from '../library/library-state';
import { useStore } from '../store';

export interface PickedRun extends ComparedRun {
  id: string;
  live: boolean;
}

export function useComparedRuns(): PickedRun[] {
  const ids = useLibrary((s) => s.compare);
  const entries = useLibrary((s) => s.entries);
  const histories = useLibrary((s) => s.histories);
  const liveId = useStore((s) => (s.status === 'idle' ? null : s.libraryId));
  const liveConfig = useStore((s) => s.runConfig);
  const metrics = useStore((s) => s.metrics);
  const evals = useStore((s) => s.evals);

  useEffect(() => {
    const stored = ids.filter((id) => id !== liveId && entries.some((e) => e.id === id));
    if (stored.some((id) => !(id in histories))) void loadHistories(stored);
  }, [ids, liveId, entries, histories]);

  return useMemo(() => {
    const out: PickedRun[] = [];
    for (const id of ids) {
      const entry = entries.find((e) => e.id === id);
      if (id === liveId && liveConfig) {
        out.push({ id, live: true, name: entry?.name ?? 'current run (not saved yet)', config: liveConfig, metrics, evals });
        continue;
      }
      const h = histories[id];
      if (entry && h) out.push({ id, live: false, name: entry.name, config: entry.config, metrics: h.metrics, evals: h.evals });
    }
    return out;
  }, [ids, entries, histories, liveId, liveConfig, metrics, evals]);
}
