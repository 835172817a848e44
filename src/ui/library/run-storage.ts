// The run library in IndexedDB (through `idb`): database "nsa-playground", version 2, with the
// stores `library` (LibraryEntry by id), `histories` (RunHistory by id), `checkpoints` (the
// checkpoint file's bytes by id) and `state` ('current': the id of the run the page last
// autosaved, which the page offers to continue after a reload). One run's three records are
// written in one transaction, so a failed write (QuotaExceededError, surfaced when the transaction
// aborts) leaves the previous save whole. Version 1 held one record, `runs['autosave']`: the
// upgrade moves it into the library as the current run.
import { type DBSchema, type IDBPDatabase, type IDBPTransaction, openDB, type StoreNames } from 'idb';

import { decodeCheckpoint } from '../../train/checkpoint/checkpoint';
import type { RunConfig } from '../../train/config';
import { entryFor, type LibraryEntry, type LibraryRecord, type RunHistory } from './entry';

export const LIBRARY_DB = 'nsa-playground';
export const LIBRARY_DB_VERSION = 2;
const CURRENT_KEY = 'current';

/** What the page saves of a run (the entry is derived, keeping a stored name). */
export interface RunSave {
  id: string;
  config: RunConfig;
  stepsDone: number;
  history: RunHistory;
  checkpoint: Uint8Array;
  savedAt: string;
  /** The name for a new entry (default: defaultRunName). */
  name?: string;
  origin?: LibraryEntry['origin'];
}

/** The run library's storage; every method rejects with the browser's error (quota, blocked database). */
export interface RunStorage {
  /** All entries (no histories, no checkpoints). */
  list(): Promise<LibraryEntry[]>;
  entry(id: string): Promise<LibraryEntry | null>;
  history(id: string): Promise<RunHistory | null>;
  checkpoint(id: string): Promise<Uint8Array | null>;
  /** Writes the run's entry, history and checkpoint together; `current`: it becomes the run offered after a reload. */
  save(run: RunSave, o: { current: boolean }): Promise<LibraryEntry>;
  rename(id: string, name: string): Promise<LibraryEntry>;
  /** Sets a run's notes and tags (empty ones are dropped from the entry). */
  annotate(id: string, notes: string, tags: readonly string[]): Promise<LibraryEntry>;
  /** Deletes a run and returns what it held (for Undo), or null when it was not there. */
  remove(id: string): Promise<LibraryRecord | null>;
  /** Puts a removed run back as it was. */
  restore(r: LibraryRecord): Promise<void>;
  current(): Promise<string | null>;
  setCurrent(id: string | null): Promise<void>;
}

interface LibraryDb extends DBSchema {
  library: { key: string; value: LibraryEntry };
  histories: { key: string; value: RunHistory };
  checkpoints: { key: string; value: Uint8Array };
  state: { key: string; value: string };
}

/** Version 1's one record (key 'autosave' in the store 'runs'). */
interface V1Autosave {
  bytes: Uint8Array;
  name: string;
  savedAt: string;
  stepsDone: number;
}

type RunTx = IDBPTransaction<LibraryDb, Array<StoreNames<LibraryDb>>, 'readwrite' | 'versionchange'>;

function putRecord(tx: RunTx, r: LibraryRecord): Promise<unknown> {
  return Promise.all([
    tx.objectStore('library').put(r.entry),
    tx.objectStore('histories').put(r.history, r.entry.id),
    tx.objectStore('checkpoints').put(r.checkpoint, r.entry.id),
  ]);
}

/** Moves version 1's autosave into the library (as the current run); an unreadable one is dropped. */
async function migrateV1(db: IDBPDatabase<LibraryDb>, tx: RunTx): Promise<void> {
  // The v1 store is not in this schema's types.
  const legacy = tx as unknown as IDBPTransaction<{ runs: { key: string; value: V1Autosave } }, ['runs'], 'versionchange'>;
  const old = await legacy.objectStore('runs').get('autosave');
  (db as unknown as IDBPDatabase).deleteObjectStore('runs');
  if (!old) return;
  let c;
  try {
    c = decodeCheckpoint(old.bytes, { file: old.name });
  } catch {
    return; // not a checkpoint this build reads: there is nothing to continue
  }
  const id = `run-autosave-${Date.parse(old.savedAt) || 0}`;
  const history = { metrics: c.metrics, evals: c.evals };
  const entry = entryFor(
    { id, config: c.config, history, stepsDone: c.state.stepsDone, checkpointBytes: old.bytes.length, savedAt: old.savedAt },
    null,
  );
  await putRecord(tx, { entry, history, checkpoint: old.bytes });
  await tx.objectStore('state').put(id, CURRENT_KEY);
}

/** Aborts `tx`, which a failed request may have aborted already (abort() then throws InvalidStateError). */
function abortUnlessFinished(tx: RunTx): void {
  try {
    tx.abort();
  } catch (e) {
    if (!(e instanceof DOMException && e.name === 'InvalidStateError')) throw e;
  }
}

export class IndexedDbRunStorage implements RunStorage {
  private fault: Error | null = null;

  constructor(private readonly dbName: string = LIBRARY_DB) {}

  /** Test hook (?testHooks=1): the next write fails with `e` (e.g. a QuotaExceededError), touching nothing. */
  failNextWrite(e: Error): void {
    this.fault = e;
  }

  private checkFault(): void {
    const f = this.fault;
    this.fault = null;
    if (f) throw f;
  }

  /** Opens (and on first use upgrades) the database; an upgrade held up by an older page in another tab fails, saying so. */
  private open(): Promise<IDBPDatabase<LibraryDb>> {
    let onBlocked: (e: Error) => void = () => {};
    const blocked = new Promise<never>((_, reject) => (onBlocked = reject));
    blocked.catch(() => {});
    let migrationError: unknown = null;
    const opened = openDB<LibraryDb>(this.dbName, LIBRARY_DB_VERSION, {
      upgrade(db, oldVersion, _newVersion, tx) {
        db.createObjectStore('library', { keyPath: 'id' });
        db.createObjectStore('histories');
        db.createObjectStore('checkpoints');
        db.createObjectStore('state');
        // idb does not wait for the migration. One that fails aborts the upgrade, so nothing is half
        // moved (version 1's record stays) and opening fails with the migration's error.
        if (oldVersion === 1)
          migrateV1(db, tx).catch((e: unknown) => {
            migrationError = e;
            tx.done.catch(() => {}); // the abort is reported by openDB's rejection
            abortUnlessFinished(tx);
          });
      },
      blocked: () =>
        onBlocked(new Error('the run library is held open by an older version of this page in another tab: close that tab and reload')),
    }).catch((e: unknown) => {
      throw migrationError ?? e;
    });
    // Once the other tab lets go, the upgrade completes: that late connection is not used, so close it.
    void blocked.catch(() => opened.then((db) => db.close())).catch(() => {});
    return Promise.race([opened, blocked]);
  }

  private async with<T>(f: (db: IDBPDatabase<LibraryDb>) => Promise<T>): Promise<T> {
    const db = await this.open();
    try {
      return await f(db);
    } finally {
      db.close();
    }
  }

  list(): Promise<LibraryEntry[]> {
    return this.with((db) => db.getAll('library'));
  }

  entry(id: string): Promise<LibraryEntry | null> {
    return this.with(async (db) => (await db.get('library', id)) ?? null);
  }

  history(id: string): Promise<RunHistory | null> {
    return this.with(async (db) => (await db.get('histories', id)) ?? null);
  }

  checkpoint(id: string): Promise<Uint8Array | null> {
    return this.with(async (db) => (await db.get('checkpoints', id)) ?? null);
  }

  save(run: RunSave, o: { current: boolean }): Promise<LibraryEntry> {
    return this.with(async (db) => {
      this.checkFault();
      const tx = db.transaction(['library', 'histories', 'checkpoints', 'state'], 'readwrite');
      const previous = (await tx.objectStore('library').get(run.id)) ?? null;
      const entry = entryFor({ ...run, checkpointBytes: run.checkpoint.length }, previous, run.origin);
      await putRecord(tx, { entry, history: run.history, checkpoint: run.checkpoint });
      if (o.current) await tx.objectStore('state').put(run.id, CURRENT_KEY);
      await tx.done;
      return entry;
    });
  }

  rename(id: string, name: string): Promise<LibraryEntry> {
    return this.with(async (db) => {
      this.checkFault();
      const tx = db.transaction('library', 'readwrite');
      const e = await tx.store.get(id);
      if (!e) throw new Error(`No run ${id} in the library (deleted in another tab?)`);
      const renamed = { ...e, name };
      await tx.store.put(renamed);
      await tx.done;
      return renamed;
    });
  }

  annotate(id: string, notes: string, tags: readonly string[]): Promise<LibraryEntry> {
    return this.with(async (db) => {
      this.checkFault();
      const tx = db.transaction('library', 'readwrite');
      const e = await tx.store.get(id);
      if (!e) throw new Error(`No run ${id} in the library (deleted in another tab?)`);
      const { notes: _notes, tags: _tags, ...rest } = e;
      const annotated: LibraryEntry = {
        ...rest,
        ...(notes.trim() ? { notes: notes.trim() } : {}),
        ...(tags.length ? { tags: [...tags] } : {}),
      };
      await tx.store.put(annotated);
      await tx.done;
      return annotated;
    });
  }

  remove(id: string): Promise<LibraryRecord | null> {
    return this.with(async (db) => {
      this.checkFault();
      const tx = db.transaction(['library', 'histories', 'checkpoints', 'state'], 'readwrite');
      const [entry, history, checkpoint, current] = await Promise.all([
        tx.objectStore('library').get(id),
        tx.objectStore('histories').get(id),
        tx.objectStore('checkpoints').get(id),
        tx.objectStore('state').get(CURRENT_KEY),
      ]);
      await Promise.all([
        tx.objectStore('library').delete(id),
        tx.objectStore('histories').delete(id),
        tx.objectStore('checkpoints').delete(id),
        current === id ? tx.objectStore('state').delete(CURRENT_KEY) : null,
      ]);
      await tx.done;
      return entry && history && checkpoint ? { entry, history, checkpoint } : null;
    });
  }

  restore(r: LibraryRecord): Promise<void> {
    return this.with(async (db) => {
      this.checkFault();
      const tx = db.transaction(['library', 'histories', 'checkpoints'], 'readwrite');
      await putRecord(tx, r);
      await tx.done;
    });
  }

  current(): Promise<string | null> {
    return this.with(async (db) => (await db.get('state', CURRENT_KEY)) ?? null);
  }

  setCurrent(id: string | null): Promise<void> {
    return this.with(async (db) => {
      this.checkFault();
      if (id === null) await db.delete('state', CURRENT_KEY);
      else await db.put('state', id, CURRENT_KEY);
    });
  }
}
