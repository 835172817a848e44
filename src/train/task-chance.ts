// The chance level of a run's task (browser-safe, no GPU imports: the page's charts draw it).
import type { RunConfig } from './config';

/** Chance accuracy of the run's task (1 / values for recall), or null for text data. */
export function taskChance(c: RunConfig): number | null {
  return c.data.source === 'recall' && c.data.recall ? 1 / c.data.recall.values : null;
}
