// The run library's tag filter (pure): the tags its runs carry, sweeps apart (`sweep:<name>`), and
// the runs one tag selects.
import { SWEEP_TAG_PREFIX } from '../sweep/sweep-plan';
import type { LibraryEntry } from './entry';

export interface TagChoices {
  /** Plain tags, alphabetical, with how many runs carry each. */
  tags: Array<{ tag: string; runs: number }>;
  /** Sweep tags (`sweep:<name>`), newest sweep first (by its newest run). */
  sweeps: Array<{ tag: string; name: string; runs: number }>;
}

export function tagChoices(entries: readonly LibraryEntry[]): TagChoices {
  const count = new Map<string, number>();
  const newest = new Map<string, string>();
  for (const e of entries)
    for (const t of e.tags ?? []) {
      count.set(t, (count.get(t) ?? 0) + 1);
      if ((newest.get(t) ?? '') < e.savedAt) newest.set(t, e.savedAt);
    }
  const all = [...count.keys()];
  return {
    tags: all
      .filter((t) => !t.startsWith(SWEEP_TAG_PREFIX))
      .sort((a, b) => a.localeCompare(b))
      .map((tag) => ({ tag, runs: count.get(tag)! })),
    sweeps: all
      .filter((t) => t.startsWith(SWEEP_TAG_PREFIX))
      .sort((a, b) => newest.get(b)!.localeCompare(newest.get(a)!) || a.localeCompare(b))
      .map((tag) => ({ tag, name: tag.slice(SWEEP_TAG_PREFIX.length), runs: count.get(tag)! })),
  };
}

/** The runs listed under `tag` (all for null). */
export function filterByTag(entries: readonly LibraryEntry[], tag: string | null): readonly LibraryEntry[] {
  return tag === null ? entries : entries.filter((e) => e.tags?.includes(tag));
}
