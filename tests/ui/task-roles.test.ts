// The stepper's recall labels against sequences drawn by the recall generator, whose structure
// (query, key and value positions) the generator reports itself.
import { describe, expect, it } from 'vitest';

import { generateRecallSequence, recallVocab } from '../../src/train/data/recall';
import { RECALL_TASK } from '../../src/train/recall-preset';
import { recallLabels } from '../../src/ui/stepper/task-roles';
import { mulberry32 } from '../../src/util/random';

describe('recall token roles', () => {
  it('labels keys, values, queries and answers, and finds each query’s stored pair', () => {
    const T = 64;
    const rand = mulberry32(7);
    for (let n = 0; n < 50; n++) {
      const seq = generateRecallSequence(RECALL_TASK, T, rand);
      const inputs = seq.raw.subarray(0, T);
      const L = recallLabels(inputs, RECALL_TASK, T)!;
      expect(L).not.toBeNull();
      seq.queryPositions.forEach((q, i) => {
        expect(L.roles[q]).toBe('query');
        if (q + 1 < T) expect(L.roles[q + 1]).toBe('answer');
        expect(L.pairs.get(q)).toEqual({ key: seq.keyPositions[i], value: seq.valuePositions[i] });
        expect(L.roles[seq.keyPositions[i]]).toBe('key');
        expect(L.roles[seq.valuePositions[i]]).toBe('value');
      });
      const v = recallVocab(RECALL_TASK);
      for (const p of seq.pairStarts) expect([L.roles[p], L.roles[p + 1]]).toEqual(['key', 'value']);
      const stored = L.roles.filter((r) => r === 'key').length;
      expect(stored).toBe(seq.pairStarts.length);
      for (let p = 0; p < T; p++) if (L.roles[p] === 'filler') expect(inputs[p]).toBeLessThan(v.keyBase);
    }
  });

  it('returns null for tokens that are not a recall sequence of this length', () => {
    expect(recallLabels(new Int32Array(10), RECALL_TASK, 64)).toBeNull();
    expect(recallLabels(new Int32Array(64).fill(999), RECALL_TASK, 64)).toBeNull();
  });
});
