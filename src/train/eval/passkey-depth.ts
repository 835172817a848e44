// Passkey accuracy by needle depth: the needle-in-a-haystack plot's numbers. The held-out sequences
// are split by where their needle sits — equal ranges of the needle positions the task draws from
// (passkeyNeedleRange) — and each range gets its whole-key accuracy and its accuracy per digit, so a
// model that finds near needles but not far ones (or the reverse) shows it, and a digit that fails
// everywhere shows that instead. Pure and browser-safe: the scores come from AnswerScore.answersRight
// (either engine), the needles from the held-out tokens themselves.

import type { RunConfig } from '../config';
import type { Batch } from '../data/batch';
import { passkeyNeedleRange, passkeyVocab } from '../data/passkey';
import type { DepthKeys } from '../types';

/** Ranges of needle position the CLI's eval lines and the page split the held-out keys into. */
export const PASSKEY_DEPTH_BINS = 4;

/** One range of needle positions [from, to] (inclusive) and how the sequences with their needle there scored. */
export interface DepthBin extends DepthKeys {
  /** Sequences whose every answer is right (the whole key), over `sequences`; null when the range is empty. */
  wholeKeys: number | null;
  /** [j]: right j-th answers (digit j) over `sequences`; null when the range is empty. */
  accuracyByAnswer: number[] | null;
}

/**
 * The needle marker's position in each of a batch's B sequences (T inputs each): the first input equal
 * to `needleToken`. Throws when a sequence has none (not a passkey batch, or the wrong token).
 */
export function passkeyNeedlePositions(tokens: ArrayLike<number>, B: number, T: number, needleToken: number): number[] {
  if (tokens.length !== B * T) throw new Error(`passkeyNeedlePositions: ${tokens.length} tokens, expected B·T = ${B * T}`);
  return Array.from({ length: B }, (_, b) => {
    for (let t = 0; t < T; t++) if (tokens[b * T + t] === needleToken) return t;
    throw new Error(`passkeyNeedlePositions: sequence ${b} holds no needle marker (token ${needleToken})`);
  });
}

/**
 * Splits [lo, hi] (the needle positions drawn from) into `bins` ranges of near-equal length and scores
 * each: `needles[i]` is sequence i's needle position, `answersRight[i]` its answers ('1' right, '0'
 * wrong, one per digit). Needles outside [lo, hi] are an error (the task draws none there).
 */
export function accuracyByDepth(
  needles: readonly number[],
  answersRight: readonly string[],
  range: [number, number],
  bins: number,
): DepthBin[] {
  const [lo, hi] = range;
  if (needles.length !== answersRight.length)
    throw new Error(`accuracyByDepth: ${needles.length} needles but ${answersRight.length} scored sequences`);
  if (!(Number.isInteger(bins) && bins >= 1)) throw new Error(`accuracyByDepth: bins must be an integer ≥ 1 (got ${bins})`);
  if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo <= hi)) throw new Error(`accuracyByDepth: bad needle range [${lo}, ${hi}]`);
  const n = Math.min(bins, hi - lo + 1); // no empty-by-construction ranges
  const span = hi - lo + 1;
  const edges = Array.from({ length: n + 1 }, (_, i) => lo + Math.floor((i * span) / n)); // bin i: [edges[i], edges[i+1])
  const count = new Array<number>(n).fill(0);
  const whole = new Array<number>(n).fill(0);
  const right: number[][] = Array.from({ length: n }, () => []);
  needles.forEach((p, i) => {
    if (!(Number.isInteger(p) && p >= lo && p <= hi))
      throw new Error(`accuracyByDepth: needle ${p} of sequence ${i} outside [${lo}, ${hi}]`);
    let bin = n - 1;
    while (edges[bin] > p) bin--;
    const marks = answersRight[i];
    count[bin]++;
    if (!marks.includes('0')) whole[bin]++;
    for (let j = 0; j < marks.length; j++) right[bin][j] = (right[bin][j] ?? 0) + (marks[j] === '1' ? 1 : 0);
  });
  const answers = Math.max(0, ...answersRight.map((m) => m.length));
  return count.map((c, i) => ({
    from: edges[i],
    to: edges[i + 1] - 1,
    sequences: c,
    keysRight: whole[i],
    wholeKeys: c ? whole[i] / c : null,
    accuracyByAnswer: c ? Array.from({ length: answers }, (_, j) => (right[i][j] ?? 0) / c) : null,
  }));
}

/**
 * A passkey run's held-out score by needle depth (PASSKEY_DEPTH_BINS ranges of its task's needle
 * range): `batches` are the held-out batches in the order scored, `answersRight` the scorer's marks
 * (AnswerScore.answersRight, learn.py's answers_right). Null for any other task.
 */
export function passkeyDepthScore(config: RunConfig, batches: readonly Batch[], answersRight: readonly string[]): DepthBin[] | null {
  const task = config.data.passkey;
  if (config.data.source !== 'passkey' || !task) return null;
  const T = config.model.seqLen;
  const needle = passkeyVocab(task).needle;
  const needles = batches.flatMap((b) => passkeyNeedlePositions(b.tokens, b.tokens.length / T, T, needle));
  return accuracyByDepth(needles, answersRight, passkeyNeedleRange(task, T), PASSKEY_DEPTH_BINS);
}
