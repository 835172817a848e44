// Share a result: write the held run's result file (share/result-file.ts) or its standalone web page
// (share/standalone-html.ts), or open either — in any browser's copy of the page — into the
// shared-result view.
import { create } from 'zustand';

import type { SelectionSnapshot } from '../../definitions/selection-snapshot';
import { loadSnapshot } from '../controller';
import { downloadText } from '../heartbeat/download';
import { runFileName } from '../heartbeat/file-name';
import { useLibrary } from '../library/library-state';
import { useStore } from '../store';
import { decodeResult, encodeResult, resultFileName, type SharedResult } from './result-file';
import { standaloneResultHtml } from './standalone-html';

interface SharedState {
  /** The opened result file, shown in its own view; null: none. */
  result: SharedResult | null;
  error: string | null;
  set(patch: Partial<Pick<SharedState, 'result' | 'error'>>): void;
}

export const useShared = create<SharedState>()((set) => ({ result: null, error: null, set: (patch) => set(patch) }));

/**
 * Writes the held run's result: the result file (`json`), or the standalone web page that draws it
 * and embeds it (`html`). Resolves to why not, or null once it is offered as a download.
 */
export async function shareCurrentRun(kind: 'json' | 'html' = 'json'): Promise<string | null> {
  const s = useStore.getState();
  if (!s.runConfig || s.metrics.length === 0) return 'Take a step first: there is no result to share yet.';
  // The latest snapshot step, every layer and group (kept by the worker; none for dense models).
  const step = s.snapshotSteps.at(-1);
  const snapshots: SelectionSnapshot[] = [];
  if (step !== undefined)
    for (let layer = 0; layer < s.runConfig.model.nLayers; layer++)
      for (let group = 0; group < s.runConfig.model.nKvGroups; group++) {
        const snap = await loadSnapshot(step, layer, group);
        if (snap) snapshots.push(snap);
      }
  const entry = useLibrary.getState().entries.find((e) => e.id === s.libraryId);
  const name = entry?.name ?? runFileName(s.runConfig, null, s.stepsDone, 'result').replace(/_result$/, '');
  const result: SharedResult = {
    name,
    createdAt: new Date().toISOString(),
    config: s.runConfig,
    metrics: [...s.metrics],
    evals: [...s.evals],
    snapshots,
    ...(entry?.notes ? { notes: entry.notes } : {}),
    ...(entry?.tags?.length ? { tags: entry.tags } : {}),
  };
  const text = encodeResult(result);
  if (kind === 'html') downloadText(resultFileName(name, 'html'), standaloneResultHtml(result, text), 'text/html');
  else downloadText(resultFileName(name), text, 'application/json');
  return null;
}

/** Opens a result file into the shared-result view, or says why it cannot. */
export async function openResultFile(file: File): Promise<void> {
  try {
    useShared.getState().set({ result: decodeResult(await file.text(), file.name), error: null });
  } catch (e) {
    useShared.getState().set({ error: e instanceof Error ? e.message : String(e) });
  }
}
