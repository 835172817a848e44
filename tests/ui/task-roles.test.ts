// The stepper's recall and passkey labels against sequences drawn by the task generators, whose
// structure (query, key and value positions; needle and answer positions) they report themselves.
import { describe, expect, it } from 'vitest';

import { generatePasskeySequence, passkeyVocab } from '../../src/train/data/passkey';
import { generateRecallSequence, recallVocab } from '../../src/train/data/recall';
import { PASSKEY_TASK } from '../../src/train/presets/passkey-preset';
import { RECALL_TASK } from '../../src/train/presets/recall-preset';
import { nextWithRole, openingT, passkeyLabels, recallLabels } from '../../src/ui/stepper/task-roles';
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

describe('passkey token roles', () => {
  it('labels the needle (marker and digits), the query marker and the answers; maps each scored input to its digit in the needle', () => {
    const T = 64;
    const k = PASSKEY_TASK.keyLength;
    const v = passkeyVocab(PASSKEY_TASK);
    const rand = mulberry32(7);
    for (let n = 0; n < 50; n++) {
      const seq = generatePasskeySequence(PASSKEY_TASK, T, rand);
      const inputs = seq.raw.subarray(0, T);
      const L = passkeyLabels(inputs, PASSKEY_TASK, T)!;
      expect(L).not.toBeNull();
      expect(L.needle).toBe(seq.needle);
      expect(L.roles[seq.needle]).toBe('needle');
      for (const p of seq.keyPositions) expect(L.roles[p]).toBe('needle');
      expect(L.roles[seq.query]).toBe('query');
      for (let t = seq.query + 1; t < T; t++) expect(L.roles[t]).toBe('answer');
      expect(L.roles.filter((r) => r === 'needle').length).toBe(k + 1);
      expect(L.roles.filter((r) => r === 'filler').length).toBe(T - 2 * k - 1);
      for (let p = 0; p < T; p++) if (L.roles[p] === 'filler') expect(inputs[p]).toBeLessThan(v.needle);
      // Each scored input's target is the needle digit it points at.
      expect([...L.sources.keys()]).toEqual(seq.answerPositions);
      seq.answerPositions.forEach((t, i) => {
        expect(L.digit.get(t)).toBe(i);
        expect(L.sources.get(t)).toBe(seq.keyPositions[i]);
        expect(seq.raw[t + 1]).toBe(seq.raw[L.sources.get(t)!]);
      });
    }
  });

  it('returns null for tokens that are not a passkey sequence of this length', () => {
    expect(passkeyLabels(new Int32Array(10), PASSKEY_TASK, 64)).toBeNull();
    expect(passkeyLabels(new Int32Array(64), PASSKEY_TASK, 64)).toBeNull(); // no query marker at T − k
    const seq = generatePasskeySequence(PASSKEY_TASK, 64, mulberry32(1)).raw.slice(0, 64);
    seq[3] = 999;
    expect(passkeyLabels(seq, PASSKEY_TASK, 64)).toBeNull();
    // A haystack without a needle: roles, but nothing to point at.
    const none = generatePasskeySequence(PASSKEY_TASK, 64, mulberry32(1)).raw.slice(0, 64);
    none.fill(0, 0, 60);
    const L = passkeyLabels(none, PASSKEY_TASK, 64)!;
    expect(L.needle).toBeNull();
    expect(L.sources.size).toBe(0);
    expect(L.roles.slice(0, 60).every((r) => r === 'filler')).toBe(true);
  });
});

describe('where the stepper opens and how it jumps', () => {
  it('opens on the query scored for the last answer (recall: the last query; passkey: the input before the last digit), else T − 1', () => {
    const T = 64;
    const seq = generateRecallSequence(RECALL_TASK, T, mulberry32(3));
    const roles = recallLabels(seq.raw.subarray(0, T), RECALL_TASK, T)!.roles;
    const t = openingT(T, { recall: RECALL_TASK });
    expect(roles[t]).toBe('query');
    expect(roles.lastIndexOf('query')).toBe(t);
    expect(openingT(T, { passkey: PASSKEY_TASK })).toBe(T - 1);
    expect(openingT(T, {})).toBe(T - 1);
    expect(openingT(0, {})).toBe(0);
  });

  it('jumps to the previous and next position of a role, null past the ends', () => {
    const roles = ['filler', 'key', 'value', 'query', 'answer', 'query', 'answer', 'query'] as const;
    expect(nextWithRole(roles, 0, 'query', 1)).toBe(3);
    expect(nextWithRole(roles, 3, 'query', 1)).toBe(5);
    expect(nextWithRole(roles, 7, 'query', 1)).toBeNull();
    expect(nextWithRole(roles, 7, 'answer', -1)).toBe(6);
    expect(nextWithRole(roles, 4, 'answer', -1)).toBeNull();
  });
});
