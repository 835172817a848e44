// The chance level and the scored answer positions of a run's task (browser-safe, no GPU imports:
// the page's charts draw the chance line).
import type { RunConfig } from '../config';
import { passkeyAnswerPositions } from '../data/passkey';
import { recallAnswerPositions } from '../data/recall';

/**
 * Chance accuracy per answer token of the run's task, or null for text data: 1 / values for
 * recall, 1 / digits for passkey (each passkey digit is scored on its own; a whole k-digit key is
 * right by chance with probability digits^−k, see taskKeyChance).
 */
export function taskChance(c: RunConfig): number | null {
  if (c.data.source === 'recall' && c.data.recall) return 1 / c.data.recall.values;
  if (c.data.source === 'passkey' && c.data.passkey) return 1 / c.data.passkey.digits;
  return null;
}

/** Chance that every answer of a passkey sequence (the whole key) is right: digits^−keyLength; null for other data. */
export function taskKeyChance(c: RunConfig): number | null {
  return c.data.source === 'passkey' && c.data.passkey ? c.data.passkey.digits ** -c.data.passkey.keyLength : null;
}

/** How many targets of each sequence are the task's answers, or null for text data. */
export function taskAnswersPerSequence(c: RunConfig): number | null {
  if (c.data.source === 'recall' && c.data.recall) return c.data.recall.queries;
  if (c.data.source === 'passkey' && c.data.passkey) return c.data.passkey.keyLength;
  return null;
}

/**
 * The input positions whose targets are the task's answers when they are the same in every
 * sequence (passkey, scattered recall), or null for text data and the mqar layout (its queries
 * move: the dataset marks them by their targets).
 */
export function taskAnswerPositions(c: RunConfig): number[] | null {
  if (c.data.source === 'recall' && c.data.recall)
    return c.data.recall.layout === 'mqar' ? null : recallAnswerPositions(c.model.seqLen, c.data.recall.queries);
  if (c.data.source === 'passkey' && c.data.passkey) return passkeyAnswerPositions(c.model.seqLen, c.data.passkey.keyLength);
  return null;
}

/** What the task's answers are, for chart titles and log lines ('recall answers', 'passkey digits'), or null for text data. */
export function taskAnswerLabel(c: RunConfig): string | null {
  if (c.data.source === 'recall' && c.data.recall) return 'recall answers';
  if (c.data.source === 'passkey' && c.data.passkey) return 'passkey digits';
  return null;
}
