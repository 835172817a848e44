// The page's sweep in localStorage (one sweep: the last planned), so Resume continues with its next
// unfinished setting after a reload. A stored value that is not a sweep of this version is ignored
// (and said so), never half-read.
import { runConfigErrors } from '../config/parse';
import type { Sweep } from './sweep-plan';

export const SWEEP_KEY = 'nsa-playground.sweep';

/** The storage a sweep lives in (the page's localStorage; tests pass a Map-backed one). */
export type KeyValue = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function pageStorage(): KeyValue | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled for this origin
  }
}

/** Why `raw` is not a stored sweep, or null. */
export function sweepProblem(raw: unknown): string | null {
  const s = raw as Partial<Sweep> | null;
  if (!s || typeof s !== 'object') return 'not an object';
  if (s.version !== 1) return `version ${String(s.version)}, this page reads 1`;
  if (typeof s.id !== 'string' || typeof s.name !== 'string' || typeof s.createdAt !== 'string') return 'id, name or createdAt missing';
  if (!s.grid || typeof s.grid !== 'object' || typeof s.grid.target !== 'number') return 'grid missing';
  if (!Array.isArray(s.settings) || s.settings.length === 0) return 'no settings';
  for (const [i, x] of s.settings.entries()) {
    if (!['pending', 'started', 'finished'].includes(x?.state)) return `settings[${i}].state`;
    if (x.libraryId !== null && typeof x.libraryId !== 'string') return `settings[${i}].libraryId`;
    const issues = x.config && typeof x.config === 'object' ? runConfigErrors(x.config) : [{ field: 'config', message: 'missing' }];
    if (issues.length) return `settings[${i}].config.${issues[0].field}: ${issues[0].message}`;
  }
  return null;
}

/** The stored sweep, null when there is none; throws saying why a stored value cannot be read. */
export function loadSweep(storage: KeyValue | null = pageStorage()): Sweep | null {
  const text = storage?.getItem(SWEEP_KEY) ?? null;
  if (text === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('The stored sweep is not JSON; it was set aside.');
  }
  const problem = sweepProblem(raw);
  if (problem) throw new Error(`The stored sweep cannot be read (${problem}); it was set aside.`);
  return raw as Sweep;
}

/** Stores the sweep (null: forgets it); throws the browser's error (a full quota). */
export function saveSweep(s: Sweep | null, storage: KeyValue | null = pageStorage()): void {
  if (!storage) return;
  if (s === null) storage.removeItem(SWEEP_KEY);
  else storage.setItem(SWEEP_KEY, JSON.stringify(s));
}
