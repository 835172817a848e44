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
import { decodeResultParam, encodeResultParam, MAX_LINK_CHARS, resultLink, resultParam } from './result-link';
import { standaloneResultHtml } from './standalone-html';

interface SharedState {
  /** The opened result file, shown in its own view; null: none. */
  result: SharedResult | null;
  error: string | null;
  set(patch: Partial<Pick<SharedState, 'result' | 'error'>>): void;
}

export const useShared = create<SharedState>()((set) => ({ result: null, error: null, set: (patch) => set(patch) }));

/** The held run's result (its latest snapshot step's selections unless `snapshots` is false), or why there is none. */
async function currentResult(snapshots = true): Promise<SharedResult | string> {
  const s = useStore.getState();
  if (!s.runConfig || s.metrics.length === 0) return 'Take a step first: there is no result to share yet.';
  // The latest snapshot step, every layer and group (kept by the worker; none for dense models).
  const step = snapshots ? s.snapshotSteps.at(-1) : undefined;
  const snaps: SelectionSnapshot[] = [];
  if (step !== undefined)
    for (let layer = 0; layer < s.runConfig.model.nLayers; layer++)
      for (let group = 0; group < s.runConfig.model.nKvGroups; group++) {
        const snap = await loadSnapshot(step, layer, group);
        if (snap) snaps.push(snap);
      }
  const entry = useLibrary.getState().entries.find((e) => e.id === s.libraryId);
  const name = entry?.name ?? runFileName(s.runConfig, null, s.stepsDone, 'result').replace(/_result$/, '');
  return {
    name,
    createdAt: new Date().toISOString(),
    config: s.runConfig,
    metrics: [...s.metrics],
    evals: [...s.evals],
    snapshots: snaps,
    ...(entry?.notes ? { notes: entry.notes } : {}),
    ...(entry?.tags?.length ? { tags: entry.tags } : {}),
  };
}

/**
 * Writes the held run's result: the result file (`json`), or the standalone web page that draws it
 * and embeds it (`html`). Resolves to why not, or null once it is offered as a download.
 */
export async function shareCurrentRun(kind: 'json' | 'html' = 'json'): Promise<string | null> {
  const result = await currentResult();
  if (typeof result === 'string') return result;
  const text = encodeResult(result);
  if (kind === 'html') downloadText(resultFileName(result.name, 'html'), standaloneResultHtml(result, text), 'text/html');
  else downloadText(resultFileName(result.name), text, 'application/json');
  return null;
}

/**
 * The held run's result as a link (its selections too when the link stays short enough, else
 * without them); `{ error }` when it has none or is too long for a link even so.
 */
export async function shareLink(pageUrl: string = location.href): Promise<{ url: string; snapshots: boolean } | { error: string }> {
  for (const snapshots of [true, false]) {
    const result = await currentResult(snapshots);
    if (typeof result === 'string') return { error: result };
    const param = await encodeResultParam(encodeResult(result));
    if (param.length <= MAX_LINK_CHARS) return { url: resultLink(pageUrl, param), snapshots: result.snapshots.length > 0 };
  }
  return { error: 'This result is too long for a link: share it as a file or a web page.' };
}

/** A page opened with ?result=…: that result in the shared-result view, or why not. */
export async function openResultFromLink(search: string = location.search): Promise<void> {
  const param = resultParam(search);
  if (param === null) return;
  const name = 'The result link';
  try {
    useShared.getState().set({ result: decodeResult(await decodeResultParam(param), name), error: null });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    useShared.getState().set({ error: why.startsWith(name) ? why : `${name}: ${why}` });
  }
}

/** Opens a result file into the shared-result view, or says why it cannot. */
export async function openResultFile(file: File): Promise<void> {
  try {
    useShared.getState().set({ result: decodeResult(await file.text(), file.name), error: null });
  } catch (e) {
    useShared.getState().set({ error: e instanceof Error ? e.message : String(e) });
  }
}
