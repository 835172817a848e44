// needle-read.ts on hand-made sequences (the cases python/tests/test_needle.py checks for the PyTorch
// engine's twin): each answer's source, a selection that holds it or not, and the tally's split of
// the accuracy by routing.
import { describe, expect, it } from 'vitest';

import { answerSources, NeedleTally } from '../../src/train/eval/needle-read';

const I = -1; // IGNORE_TARGET
const T = 12;
// Row 0, recall: pairs (5 → 7) at 1–2 and (6 → 8) at 3–4; queries 6 at 6 and 5 at 8.
// Row 1, passkey-like: needle 9 at 1, digits 3 4 3 4 at 2–5, query marker 2 at 7, answers 3 4 3 4
// (targets of 7–10): the first digit has no earlier bigram (2, 3); digit 3's bigram (4, 3) is found
// at its first place (4), not in the answer's own earlier digits; a repeated bigram takes the earliest.
const X = [0, 5, 7, 6, 8, 0, 6, 0, 5, 0, 0, 0, 0, 9, 3, 4, 3, 4, 0, 2, 3, 4, 3, 0];
const Y = [I, I, I, I, I, I, 8, I, 7, I, I, I, I, I, I, I, I, I, I, 3, 4, 3, 4, I];

describe('answer sources', () => {
  it('finds the earliest earlier copy of each answer bigram, and none for the rest', () => {
    const want = new Int32Array(2 * T).fill(-1);
    want[6] = 4;
    want[8] = 2;
    want[T + 8] = 3;
    want[T + 9] = 4;
    want[T + 10] = 3;
    expect(answerSources(X, Y, 2, T)).toEqual(want);
  });

  it('takes no source at or after the query', () => {
    const x = [1, 2, 1, 2];
    expect([...answerSources(x, [I, I, 2, I], 1, 4)]).toEqual([-1, -1, 1, -1]);
    expect([...answerSources(x, [I, 1, I, I], 1, 4)]).toEqual([-1, -1, -1, -1]); // (2, 1)'s copy is at 2 > t = 1
    expect([...answerSources(x, [2, I, I, I], 1, 4)]).toEqual([-1, -1, -1, -1]); // t = 0: nothing before it
  });

  it('refuses a batch of the wrong size', () => {
    expect(() => answerSources(X, Y, 2, 11)).toThrow(/B·T = 22/);
  });
});

describe('NeedleTally', () => {
  it('counts a source read when some group selected its block; pads never match', () => {
    const sources = Int32Array.from([4, -1, 9]); // blocks of 4: 4 → block 1, 9 → block 2
    // 3 rows of G = 2 groups × K = 2: row 0 group 1 holds block 1; row 2 holds blocks 0 and 3, and pads.
    const sel = Int32Array.from([-1, -1, 0, 1, -1, -1, -1, -1, 0, 3, -1, -1]);
    const tally = new NeedleTally(1);
    tally.add([sel], 4, sources, 4, Uint8Array.from([1, 0, 0]));
    expect(tally.score()).toEqual({ answers: 2, selectedByLayer: [0.5], selectedAny: 0.5, accuracySelected: 1, accuracyMissed: 0 });
    // Tokens (DSA, block 1): the position itself.
    const tokens = new NeedleTally(1);
    tokens.add([Int32Array.from([4, -1, 0, 0, 0, 0, 0, 0, 9, -1, -1, -1])], 4, sources, 1, Uint8Array.from([0, 0, 1]));
    expect(tokens.score()).toEqual({ answers: 2, selectedByLayer: [1], selectedAny: 1, accuracySelected: 0.5, accuracyMissed: null });
  });

  it('splits the accuracy by routing over layers', () => {
    const sources = answerSources(X, Y, 2, T);
    // Layer 0 selects block 1 (positions 2–3) for every query, layer 1 block 2 (4–5); G = K = 1.
    const layer0 = new Int32Array(2 * T).fill(1);
    const layer1 = new Int32Array(2 * T).fill(2);
    const right = new Uint8Array(2 * T);
    right[6] = right[T + 7] = right[T + 9] = 1;
    const tally = new NeedleTally(2);
    tally.add([layer0, layer1], 1, sources, 2, right);
    // Sources 4 (block 2), 2 (1), 3 (1), 4 (2), 3 (1): 5 answers with one (row 1's t = 7 has none).
    expect(tally.score()).toEqual({
      answers: 5,
      selectedByLayer: [3 / 5, 2 / 5],
      selectedAny: 1,
      accuracySelected: 2 / 5, // (0, 6) and (1, 9) right; (1, 7) has no source
      accuracyMissed: null,
    });
  });

  it('refuses selections of the wrong size', () => {
    expect(() => new NeedleTally(2).add([new Int32Array(4)], 1, new Int32Array(4), 1, new Uint8Array(4))).toThrow(/1 layers/);
    expect(() => new NeedleTally(1).add([new Int32Array(5)], 1, new Int32Array(4), 1, new Uint8Array(4))).toThrow(/5 entries/);
  });
});
