// How far an untrained model's measured accuracy strays from chance: the evaluation scores n answers,
// each right with probability p (chance), so the measured share has standard deviation
// sqrt(p(1 − p)/n) (binomial). The accuracy charts shade chance ± 2σ: a point inside the band is
// not evidence of learning.
import type { RunConfig } from '../../train/config';
import { taskAnswersPerSequence, taskChance } from '../../train/eval/task-chance';

export interface ChanceBand {
  chance: number;
  /** Answers scored per evaluation. */
  n: number;
  sigma: number;
  /** chance ± 2σ, clipped to [0, 1]. */
  low: number;
  high: number;
}

/** Chance ± 2·sqrt(p(1 − p)/n), clipped to [0, 1]; null for n < 1 or p outside [0, 1]. */
export function chanceBand(p: number, n: number): ChanceBand | null {
  if (!(n >= 1 && p >= 0 && p <= 1)) return null;
  const sigma = Math.sqrt((p * (1 - p)) / n);
  return { chance: p, n, sigma, low: Math.max(0, p - 2 * sigma), high: Math.min(1, p + 2 * sigma) };
}

/** Answers one evaluation scores: answer positions per sequence × batch size × validation batches; null for text data. */
export function scoredAnswers(c: RunConfig): number | null {
  const perSequence = taskAnswersPerSequence(c);
  if (perSequence === null) return null;
  const n = perSequence * c.train.batchSize * c.train.evalBatches;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** The band of a run's task evaluation, or null for text data (or no evaluation batches). */
export function taskChanceBand(c: RunConfig): ChanceBand | null {
  const p = taskChance(c);
  const n = scoredAnswers(c);
  return p === null || n === null ? null : chanceBand(p, n);
}

/** 6.3%, 100% (at most one decimal, none when it is 0). */
export const percent = (v: number): string => `${+(100 * v).toFixed(1)}%`;

/** The band's label on the chart: "chance ± 2σ (n = 512)". */
export function bandLabel(b: ChanceBand): string {
  return `chance ± 2σ (n = ${b.n.toLocaleString('en-US')})`;
}
