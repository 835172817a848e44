// The page's autosave in IndexedDB (through `idb`): one record under the fixed key "autosave",
// the checkpoint file's bytes with its AutosaveMeta. Errors (QuotaExceededError, a blocked or
// unavailable database) are thrown to the caller, which shows them.
import { type DBSchema, openDB } from 'idb';

import type { AutosaveMeta } from './autosave-policy';

export const AUTOSAVE_KEY = 'autosave';

export interface AutosaveRecord extends AutosaveMeta {
  bytes: Uint8Array;
}

interface AutosaveDb extends DBSchema {
  runs: { key: string; value: AutosaveRecord };
}

function db() {
  return openDB<AutosaveDb>('nsa-playground', 1, {
    upgrade(d) {
      d.createObjectStore('runs');
    },
  });
}

async function withDb<T>(f: (d: Awaited<ReturnType<typeof db>>) => Promise<T>): Promise<T> {
  const d = await db();
  try {
    return await f(d);
  } finally {
    d.close();
  }
}

export function writeAutosave(r: AutosaveRecord): Promise<void> {
  return withDb(async (d) => {
    await d.put('runs', r, AUTOSAVE_KEY);
  });
}

export function readAutosave(): Promise<AutosaveRecord | null> {
  return withDb(async (d) => (await d.get('runs', AUTOSAVE_KEY)) ?? null);
}

export function deleteAutosave(): Promise<void> {
  return withDb((d) => d.delete('runs', AUTOSAVE_KEY));
}
