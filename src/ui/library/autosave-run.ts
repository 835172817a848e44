// Saving the page's run into its run-library entry: the worker's checkpoint file and history go
// to storage in one write, and the page's state says what happened. A failure (a full quota
// included) is shown next to the run controls, never swallowed; the previous save stays whole.
import type { PlaygroundStore } from '../store';
import type { LibraryEntry, RunHistory } from './entry';
import type { RunStorage } from './run-storage';
import { storageErrorMessage } from './storage-errors';

export interface AutosaveDeps {
  store: PlaygroundStore;
  storage: RunStorage;
  /** The current run's checkpoint file and history (only between train() calls). */
  snapshot(): Promise<{ checkpoint: Uint8Array; history: RunHistory }>;
  /** The entry as saved (the library list shows it). */
  onSaved(e: LibraryEntry): void;
}

/**
 * Saves the run of `epoch` when it has steps not saved yet; resolves once saved or failed (the
 * page's state holds the outcome). Answers for an older epoch (a reset meanwhile) are dropped.
 */
export async function autosaveRun(d: AutosaveDeps, epoch: number): Promise<void> {
  const s = d.store.getState();
  if (s.epoch !== epoch || !s.runConfig || !s.libraryId || s.stepsDone === s.autosavedStep) return;
  const live = () => d.store.getState().epoch === epoch;
  const step = s.stepsDone;
  const { runConfig: config, libraryId: id } = s;
  s.setAutosave({ state: 'saving', step });
  try {
    const { checkpoint, history } = await d.snapshot();
    if (!live()) return;
    const savedAt = new Date().toISOString();
    const entry = await d.storage.save({ id, config, stepsDone: step, history, checkpoint, savedAt }, { current: true });
    d.onSaved(entry);
    if (live()) d.store.getState().autosaved(step, savedAt);
  } catch (e) {
    if (live()) d.store.getState().setAutosave({ state: 'error', message: storageErrorMessage('Autosave', e) });
  }
}
