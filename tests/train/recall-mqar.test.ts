// The recall task's mqar layout (Zoology's multi-query associative recall): pairs back to back from
// minStart, queries at power-law gaps after minDistance, the draw count the stream seeks by, the
// fit check naming its field, the dataset scoring exactly the answers (which move between
// sequences), the scorer finding them by their targets, and the stepper's labels.
import { describe, expect, it } from 'vitest';

import { IGNORE_TARGET } from '../../src/definitions/targets';
import { createBatch } from '../../src/train/data/batch';
import {
  createRecallDataset,
  generateRecallSequence,
  mqarFirstQuery,
  mqarQuerySlots,
  recallDrawsPerSequence,
  type RecallTask,
  recallVocab,
  validateRecallTask,
} from '../../src/train/data/recall';
import { AnswerTally } from '../../src/train/eval/answer-score';
import { recallLabels } from '../../src/ui/stepper/task-roles';
import { mulberry32 } from '../../src/util/random';

const T = 64;
const TASK: RecallTask = { keys: 32, values: 32, fillers: 3, pairs: 8, queries: 6, minDistance: 15, minStart: 8, layout: 'mqar' };

/** A counting random source: how many draws a sequence took. */
function counted(seed: number) {
  const r = mulberry32(seed);
  const c = { draws: 0, rand: () => (c.draws++, r()) };
  return c;
}

describe('recall, mqar layout', () => {
  const v = recallVocab(TASK);
  const s0 = mqarFirstQuery(TASK);

  it('lays out pairs, then queries at gaps after minDistance, with exactly the counted draws', () => {
    expect(s0).toBe(8 + 16 - 1 + 15);
    const gapCounts = new Array<number>(mqarQuerySlots(TASK, T)).fill(0);
    for (let seed = 1; seed <= 400; seed++) {
      const c = counted(seed);
      const s = generateRecallSequence(TASK, T, c.rand);
      expect(c.draws).toBe(recallDrawsPerSequence(TASK, T));
      expect(s.raw.length).toBe(T + 1);
      // Pairs back to back from minStart, distinct keys, values after them.
      expect(s.pairStarts).toEqual(Array.from({ length: TASK.pairs }, (_, n) => TASK.minStart + 2 * n));
      const keys = s.pairStarts.map((p) => s.raw[p]);
      expect(new Set(keys).size).toBe(TASK.pairs);
      for (const p of s.pairStarts) {
        expect(s.raw[p] >= v.keyBase && s.raw[p] < v.valueBase).toBe(true);
        expect(s.raw[p + 1] >= v.valueBase && s.raw[p + 1] < v.size).toBe(true);
      }
      // Queries: ascending slots s0 + 2g inside the inputs, each the key of a distinct pair, its
      // next token that pair's value, at least minDistance after the value.
      expect(s.queryPositions.length).toBe(TASK.queries);
      expect(new Set(s.keyPositions).size).toBe(TASK.queries);
      s.queryPositions.forEach((t, i) => {
        expect((t - s0) % 2).toBe(0);
        expect(t).toBeGreaterThanOrEqual(s0);
        expect(t).toBeLessThanOrEqual(T - 1);
        if (i > 0) expect(t).toBeGreaterThan(s.queryPositions[i - 1]);
        expect(s.raw[t]).toBe(s.raw[s.keyPositions[i]]);
        expect(s.raw[t + 1]).toBe(s.raw[s.valuePositions[i]]);
        expect(t - s.valuePositions[i]).toBeGreaterThanOrEqual(TASK.minDistance);
        gapCounts[(t - s0) / 2]++;
      });
      // Everything else is a filler.
      const special = new Set([...s.pairStarts.flatMap((p) => [p, p + 1]), ...s.queryPositions.flatMap((t) => [t, t + 1])]);
      for (let p = 0; p <= T; p++) if (!special.has(p)) expect(s.raw[p]).toBeLessThan(v.keyBase);
    }
    // Power law (a = 0.01): the first gap is taken far more often than the last.
    expect(gapCounts[0]).toBeGreaterThan(2 * gapCounts[gapCounts.length - 1]);
  });

  it('refuses a sequence too short for its queries, naming the field', () => {
    expect(validateRecallTask(TASK, T)).toEqual([]);
    const need = s0 + 2 * TASK.queries - 1;
    expect(validateRecallTask(TASK, need)).toEqual([]);
    const bad = validateRecallTask(TASK, need - 1);
    expect(bad.map((b) => b.field)).toEqual(['minDistance']);
    expect(bad[0].message).toContain(`seqLen ≥ ${need}`);
    expect(validateRecallTask({ ...TASK, layout: 'zoology' as never }, T).map((b) => b.field)).toEqual(['layout']);
  });

  it('scores exactly the answers: targets elsewhere are ignored, and the tally finds them per row', () => {
    const B = 4;
    const ds = createRecallDataset({ kind: 'recall', ...TASK }, { batchSize: B, seqLen: T, seed: 3 });
    expect(ds.scoredPerSequence).toBe(TASK.queries);
    const batch = createBatch(B, T);
    ds.nextTrainBatch(batch);
    const V = v.size;
    const probs = new Float32Array(B * T * V).fill(1 / V);
    const positions: number[][] = [];
    for (let b = 0; b < B; b++) {
      const row = [];
      for (let t = 0; t < T; t++) {
        const target = batch.targets[b * T + t];
        if (target === IGNORE_TARGET) continue;
        row.push(t);
        expect(target >= v.valueBase && target < v.size).toBe(true);
        expect(batch.tokens[b * T + t] >= v.keyBase && batch.tokens[b * T + t] < v.valueBase).toBe(true);
        probs[(b * T + t) * V + target] = 0.5; // right at this answer
      }
      expect(row.length).toBe(TASK.queries);
      positions.push(row);
    }
    // The rows' answers move: not all at the same positions.
    expect(new Set(positions.map((p) => p.join(','))).size).toBeGreaterThan(1);
    const tally = new AnswerTally();
    tally.add(probs, batch.targets, { B, T, V });
    expect(tally.score()).toMatchObject({ answers: B * TASK.queries, correct: B * TASK.queries, sequencesCorrect: B });
    // Wrong at one answer of row 0: one answer and one sequence fewer.
    probs[positions[0][2] * V + batch.targets[positions[0][2]]] = 0;
    const again = new AnswerTally();
    again.add(probs, batch.targets, { B, T, V });
    expect(again.score()).toMatchObject({ correct: B * TASK.queries - 1, sequencesCorrect: B - 1 });
  });

  it('labels a sequence for the stepper: stored pairs, then queries and their answers', () => {
    const s = generateRecallSequence(TASK, T, mulberry32(11));
    const labels = recallLabels(s.raw.subarray(0, T), TASK, T)!;
    expect(labels).not.toBeNull();
    for (const p of s.pairStarts) expect([labels.roles[p], labels.roles[p + 1]]).toEqual(['key', 'value']);
    s.queryPositions.forEach((t, i) => {
      expect(labels.roles[t]).toBe('query');
      if (t + 1 < T) expect(labels.roles[t + 1]).toBe('answer');
      expect(labels.pairs.get(t)).toEqual({ key: s.keyPositions[i], value: s.valuePositions[i] });
    });
    expect(labels.roles.filter((r) => r === 'query').length).toBe(TASK.queries);
  });
});
