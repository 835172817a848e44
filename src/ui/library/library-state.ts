// The run library's page state (zustand): the listed entries, the runs picked for the comparison
// with their loaded histories, the tag the list is filtered by, the last failure and the offer to
// undo a delete or a reset. Plain data and synchronous transitions; ./library-actions.ts does the
// storage work.
import { create } from 'zustand';

import { byNewest, type LibraryEntry, type LibraryRecord, type RunHistory } from './entry';

/** What can be undone: a deleted run (kept whole in memory) or a Reset (the run is in the library). */
export type UndoOffer = { kind: 'delete'; record: LibraryRecord } | { kind: 'reset'; id: string; name: string; step: number };

export interface LibraryState {
  /** Newest first. */
  entries: LibraryEntry[];
  loaded: boolean;
  /** The last failed library action (storage, import), shown in the panel until the next action. */
  error: string | null;
  undo: UndoOffer | null;
  /** Ids picked for the comparison view, in the order picked. */
  compare: string[];
  /** Stored histories of picked runs (the live run's comes from the page's store). */
  histories: Record<string, RunHistory>;
  /** Only runs with this tag are listed (a sweep's runs: `sweep:<name>`); null: all. */
  filterTag: string | null;

  setEntries(entries: LibraryEntry[]): void;
  /** A run was saved or renamed: its entry is replaced (or added) and its loaded history dropped. */
  upsert(e: LibraryEntry): void;
  removeEntry(id: string): void;
  setError(message: string | null): void;
  setUndo(u: UndoOffer | null): void;
  /** Adds or removes a run from the comparison. */
  toggleCompare(id: string): void;
  setCompare(ids: string[]): void;
  setHistory(id: string, h: RunHistory): void;
  setFilterTag(tag: string | null): void;
}

export function createLibraryStore() {
  return create<LibraryState>()((set) => ({
    entries: [],
    loaded: false,
    error: null,
    undo: null,
    compare: [],
    histories: {},
    filterTag: null,
    setEntries: (entries) => set({ entries: [...entries].sort(byNewest), loaded: true }),
    upsert: (e) =>
      set((s) => {
        const histories = { ...s.histories };
        delete histories[e.id]; // saved again: its stored history changed
        return { entries: [e, ...s.entries.filter((x) => x.id !== e.id)].sort(byNewest), histories };
      }),
    removeEntry: (id) =>
      set((s) => {
        const histories = { ...s.histories };
        delete histories[id];
        return { entries: s.entries.filter((x) => x.id !== id), compare: s.compare.filter((x) => x !== id), histories };
      }),
    setError: (error) => set({ error }),
    setUndo: (undo) => set({ undo }),
    toggleCompare: (id) => set((s) => ({ compare: s.compare.includes(id) ? s.compare.filter((x) => x !== id) : [...s.compare, id] })),
    setCompare: (compare) => set({ compare }),
    setHistory: (id, h) => set((s) => ({ histories: { ...s.histories, [id]: h } })),
    setFilterTag: (filterTag) => set({ filterTag }),
  }));
}

export type LibraryStore = ReturnType<typeof createLibraryStore>;

export const useLibrary: LibraryStore = createLibraryStore();
