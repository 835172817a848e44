// The run library's storage actions (no worker involved): list, rename, delete with Undo, import a
// checkpoint file, download one, load histories for the comparison. Every failure is shown in the
// library panel (useLibrary's error), a full quota named as such; nothing fails silently.
import { CheckpointFormatError } from '../../train/checkpoint/checkpoint';
import { downloadText } from '../heartbeat/download';
import { checkpointFileName, type LibraryEntry, parseTags } from './entry';
import { importedRun } from './import-checkpoint';
import { type LibraryStore, useLibrary } from './library-state';
import { pytorchZip } from './pytorch-zip';
import { IndexedDbRunStorage, type RunStorage } from './run-storage';
import { storageErrorMessage } from './storage-errors';

/** The page's run library (IndexedDB; opened per call). */
export const libraryStorage = new IndexedDbRunStorage();

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs `f`, clearing the panel's last error first; a failure is shown as "<action> failed: …".
 * Resolves with f's value, or null when it failed.
 */
export async function libraryAction<T>(action: string, f: () => Promise<T>, lib: LibraryStore = useLibrary): Promise<T | null> {
  lib.getState().setError(null);
  try {
    return await f();
  } catch (e) {
    lib.getState().setError(storageErrorMessage(action, e));
    return null;
  }
}

/** Reloads the list from storage. */
export function refreshLibrary(storage: RunStorage = libraryStorage, lib: LibraryStore = useLibrary): Promise<void> {
  return libraryAction('Reading the run library', async () => lib.getState().setEntries(await storage.list()), lib).then(() => {});
}

/** A run was saved (autosave): the list shows its new entry. */
export function showSaved(e: LibraryEntry, lib: LibraryStore = useLibrary): void {
  lib.getState().upsert(e);
}

export async function renameRun(
  id: string,
  name: string,
  storage: RunStorage = libraryStorage,
  lib: LibraryStore = useLibrary,
): Promise<void> {
  const trimmed = name.trim();
  if (!trimmed) {
    lib.getState().setError('A run name cannot be empty.');
    return;
  }
  const e = await libraryAction('Renaming the run', () => storage.rename(id, trimmed), lib);
  if (e) lib.getState().upsert(e);
}

/** Sets a run's notes and tags (tags typed comma-separated). */
export async function annotateRun(
  id: string,
  notes: string,
  tagsText: string,
  storage: RunStorage = libraryStorage,
  lib: LibraryStore = useLibrary,
): Promise<void> {
  const e = await libraryAction('Saving the notes', () => storage.annotate(id, notes, parseTags(tagsText)), lib);
  if (e) lib.getState().upsert(e);
}

/** Deletes a run; the panel offers Undo (the run is kept in memory until the next offer). */
export async function deleteRun(id: string, storage: RunStorage = libraryStorage, lib: LibraryStore = useLibrary): Promise<void> {
  const record = await libraryAction('Deleting the run', () => storage.remove(id), lib);
  lib.getState().removeEntry(id);
  if (record) lib.getState().setUndo({ kind: 'delete', record });
}

/** Puts the last deleted run back. */
export async function undoDelete(storage: RunStorage = libraryStorage, lib: LibraryStore = useLibrary): Promise<void> {
  const u = lib.getState().undo;
  if (u?.kind !== 'delete') return;
  const ok = await libraryAction('Restoring the run', () => storage.restore(u.record).then(() => true), lib);
  if (!ok) return;
  lib.getState().setUndo(null);
  lib.getState().upsert(u.record.entry);
}

/**
 * Imports a checkpoint file as a new run. A file that is not a valid checkpoint is refused with
 * its name and the field at fault, and nothing is stored. Resolves with the new entry, or null.
 */
export async function importCheckpointFile(
  file: { name: string; bytes: () => Promise<Uint8Array> },
  storage: RunStorage = libraryStorage,
  lib: LibraryStore = useLibrary,
): Promise<LibraryEntry | null> {
  lib.getState().setError(null);
  let run;
  try {
    run = importedRun(await file.bytes(), file.name);
  } catch (e) {
    lib.getState().setError(e instanceof CheckpointFormatError ? `Not imported: ${e.message}` : `Cannot read ${file.name}: ${message(e)}`);
    return null;
  }
  const entry = await libraryAction(`Importing ${file.name}`, () => storage.save(run, { current: false }), lib);
  if (entry) lib.getState().upsert(entry);
  return entry;
}

/** A file made from a run's stored entry and checkpoint, downloaded (failures shown in the library). */
async function downloadFromRun(
  id: string,
  action: string,
  make: (entry: LibraryEntry, checkpoint: Uint8Array) => { name: string; bytes: Uint8Array; type: string },
  storage: RunStorage,
  lib: LibraryStore,
): Promise<void> {
  await libraryAction(
    action,
    async () => {
      const [entry, bytes] = await Promise.all([storage.entry(id), storage.checkpoint(id)]);
      if (!entry || !bytes) throw new Error('this run is no longer in the library (deleted in another tab?)');
      const file = make(entry, bytes);
      downloadText(file.name, file.bytes as Uint8Array<ArrayBuffer>, file.type);
    },
    lib,
  );
}

/** Downloads the run's stored checkpoint (`<preset>-step<N>.safetensors`, the CLI's format). */
export function downloadRunCheckpoint(id: string, storage: RunStorage = libraryStorage, lib: LibraryStore = useLibrary): Promise<void> {
  return downloadFromRun(
    id,
    'Downloading the checkpoint',
    (entry, bytes) => ({ name: checkpointFileName(entry), bytes, type: 'application/octet-stream' }),
    storage,
    lib,
  );
}

/** Downloads the run as the PyTorch export (`<run>-pytorch.zip`: config.json, model.safetensors, optimizer.safetensors). */
export function downloadRunForPyTorch(id: string, storage: RunStorage = libraryStorage, lib: LibraryStore = useLibrary): Promise<void> {
  return downloadFromRun(
    id,
    'Exporting for PyTorch',
    (entry, bytes) => ({ ...pytorchZip(bytes, entry.name), type: 'application/zip' }),
    storage,
    lib,
  );
}

/** Loads the stored histories of the picked runs that are not loaded yet. */
export async function loadHistories(
  ids: readonly string[],
  storage: RunStorage = libraryStorage,
  lib: LibraryStore = useLibrary,
): Promise<void> {
  const missing = ids.filter((id) => !(id in lib.getState().histories));
  for (const id of missing) {
    const h = await libraryAction('Reading a run history', () => storage.history(id), lib);
    if (h) lib.getState().setHistory(id, h);
  }
}
