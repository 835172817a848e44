// The passkey (needle-in-a-haystack) task, CPU only:
// - sequence layout (fillers, one needle of marker + k digits inside the haystack, the query marker
//   at T − k followed by the same digits ending the sequence), the scored positions, the depth
//   range hit at both ends, the preset's needles beyond window-only attention's reach;
// - determinism from the seed and the Dataset contract (only the answers scored);
// - validation messages naming each field; the chance level per digit and per whole key;
// - the answer scorer (AnswerTally / scoreAnswers) on hand-made logits, float64;
// - accuracy by needle depth (passkey-depth.ts): needles found in generated batches, hand-made
//   ranges and scores, and its refusals.
import { describe, expect, it } from 'vitest';

import { IGNORE_TARGET } from '../../src/definitions/targets';
import { createBatch, unigramEntropyOf } from '../../src/train/data/batch';
import {
  createPasskeyDataset,
  generatePasskeySequence,
  passkeyAnswerPositions,
  passkeyNeedleRange,
  type PasskeyTask,
  passkeyVocab,
  validatePasskeyTask,
} from '../../src/train/data/passkey';
import { AnswerTally, scoreAnswers } from '../../src/train/eval/answer-score';
import { accuracyByDepth, passkeyNeedlePositions } from '../../src/train/eval/passkey-depth';
import { taskAnswerLabel, taskAnswerPositions, taskChance, taskKeyChance } from '../../src/train/eval/task-chance';
import { PASSKEY_PRESET, PASSKEY_TASK, passkeyPreset } from '../../src/train/presets/passkey-preset';
import { recallPreset } from '../../src/train/presets/recall-preset';
import { mulberry32 } from '../../src/util/random';

const T = PASSKEY_PRESET.model.seqLen;
const W = PASSKEY_PRESET.model.nsa!.w;
const LAYERS = PASSKEY_PRESET.model.nLayers;
const K = PASSKEY_TASK.keyLength;

describe('passkey sequences', () => {
  const task = PASSKEY_TASK;
  const v = passkeyVocab(task);
  const rand = mulberry32(11);
  const samples = Array.from({ length: 2000 }, () => generatePasskeySequence(task, T, rand));

  it('vocabulary: fillers, needle marker, query marker, digits', () => {
    expect(v).toEqual({ fillerBase: 0, needle: 8, query: 9, digitBase: 10, size: 20 });
    expect(PASSKEY_PRESET.model.vocabSize).toBe(20);
  });

  it('layout: one needle inside the haystack, the query marker at T − k, the answer = the needle’s key', () => {
    expect(passkeyAnswerPositions(T, K)).toEqual([60, 61, 62, 63]);
    const bad: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok && bad.length < 10) bad.push(what);
    };
    samples.forEach((s, n) => {
      const p = s.needle;
      check(s.raw.length === T + 1, `#${n} length`);
      check(s.query === T - K && s.raw[T - K] === v.query, `#${n} query marker`);
      check(p >= 0 && p + K < T - K, `#${n} needle ${p} not inside the haystack`);
      check(s.raw[p] === v.needle, `#${n} no marker at ${p}`);
      check(s.keyPositions.join() === [1, 2, 3, 4].map((i) => p + i).join(), `#${n} key positions`);
      check(s.key.length === K && s.key.every((d) => Number.isInteger(d) && d >= 0 && d < task.digits), `#${n} key digits`);
      for (let i = 0; i < K; i++) {
        check(s.raw[p + 1 + i] === v.digitBase + s.key[i], `#${n} needle digit ${i}`);
        check(s.raw[T - K + 1 + i] === s.raw[p + 1 + i], `#${n} answer digit ${i} is not the needle's`);
      }
      check(s.answerPositions.join() === passkeyAnswerPositions(T, K).join(), `#${n} answer positions`);
      // The answers' targets: input t's target raw[t + 1] is digit t − (T − k) of the key.
      s.answerPositions.forEach((t, i) => check(s.raw[t + 1] === v.digitBase + s.key[i], `#${n} target of ${t}`));
      // Everything else in the haystack is a filler; exactly one marker of each kind.
      for (let q = 0; q < T - K; q++)
        if (q < p || q > p + K) check(s.raw[q] >= v.fillerBase && s.raw[q] < v.needle, `#${n} position ${q} is not a filler`);
      check(Array.from(s.raw).filter((x) => x === v.needle).length === 1, `#${n} needle markers`);
      check(Array.from(s.raw).filter((x) => x === v.query).length === 1, `#${n} query markers`);
    });
    expect(bad).toEqual([]);
  });

  it('the needle covers the whole depth range [round(minDepth·S), round(maxDepth·S)], S = T − 2k − 1', () => {
    expect(passkeyNeedleRange(task, T)).toEqual([8, 44]);
    const seen = new Set(samples.map((s) => s.needle));
    expect(Math.min(...seen)).toBe(8);
    expect(Math.max(...seen)).toBe(44);
    expect(seen.size).toBe(44 - 8 + 1);
    // Depth 0 and 1 are the first token and right before the query marker.
    const ends = { ...task, minDepth: 0, maxDepth: 1 };
    expect(passkeyNeedleRange(ends, T)).toEqual([0, T - 2 * K - 1]);
    const at1 = generatePasskeySequence({ ...task, minDepth: 1, maxDepth: 1 }, T, mulberry32(2));
    expect(at1.needle + K + 1).toBe(at1.query);
    expect(generatePasskeySequence({ ...task, minDepth: 0, maxDepth: 0 }, T, mulberry32(2)).needle).toBe(0);
  });

  it('preset: every answer digit lies beyond window-only reach nLayers·(w − 1), out of block 0', () => {
    let minDist = Infinity;
    for (const s of samples) s.answerPositions.forEach((t, i) => (minDist = Math.min(minDist, t - s.keyPositions[i])));
    expect(minDist).toBe(15);
    expect(minDist).toBeGreaterThan(LAYERS * (W - 1));
    expect(Math.min(...samples.map((s) => s.needle))).toBeGreaterThanOrEqual(PASSKEY_PRESET.model.nsa!.lSel);
  });

  it('digits are uniform: the answers’ empirical entropy is ln(digits) (±0.01 nats)', () => {
    const digits = new Int32Array(samples.flatMap((s) => s.key));
    expect(Math.abs(unigramEntropyOf(digits, task.digits) - Math.log(task.digits))).toBeLessThan(0.01);
  });

  it('a constant filler (fillers = 1) and a one-digit key at the shortest sequence', () => {
    const tiny: PasskeyTask = { digits: 2, keyLength: 1, fillers: 1, minDepth: 0, maxDepth: 1 };
    expect(validatePasskeyTask(tiny, 3)).toEqual([]);
    const s = generatePasskeySequence(tiny, 3, mulberry32(1));
    const v1 = passkeyVocab(tiny);
    expect(Array.from(s.raw)).toEqual([v1.needle, v1.digitBase + s.key[0], v1.query, v1.digitBase + s.key[0]]);
    const long = generatePasskeySequence({ ...tiny, keyLength: 3 }, 40, mulberry32(3));
    for (let q = 0; q < 40 - 3; q++) if (q < long.needle || q > long.needle + 3) expect(long.raw[q]).toBe(0);
  });
});

describe('passkey validation', () => {
  const bad = (patch: Partial<PasskeyTask>, seqLen = T) =>
    validatePasskeyTask({ ...PASSKEY_TASK, ...patch }, seqLen)
      .map((i) => `${i.field}: ${i.message}`)
      .join('; ');

  it('names each field that is out of range', () => {
    expect(bad({})).toBe('');
    expect(bad({ digits: 1 })).toBe('digits: must be an integer ≥ 2 (got 1)');
    expect(bad({ digits: 2.5 })).toBe('digits: must be an integer ≥ 2 (got 2.5)');
    expect(bad({ keyLength: 0 })).toBe('keyLength: must be an integer ≥ 1 (got 0)');
    expect(bad({ fillers: NaN })).toBe('fillers: must be an integer ≥ 1 (got NaN)');
    expect(bad({ minDepth: -0.1 })).toBe('minDepth: must be a number in [0, 1] (got -0.1)');
    expect(bad({ maxDepth: 1.5 })).toBe('maxDepth: must be a number in [0, 1] (got 1.5)');
    expect(bad({ maxDepth: NaN })).toBe('maxDepth: must be a number in [0, 1] (got NaN)');
    expect(
      bad({ digits: 0, keyLength: -1, fillers: 0, minDepth: 2, maxDepth: -1 })
        .split('; ')
        .map((e) => e.split(':')[0]),
    ).toEqual(['digits', 'keyLength', 'fillers', 'minDepth', 'maxDepth']);
  });

  it('names the field of each infeasible combination', () => {
    expect(bad({ minDepth: 0.9 })).toBe('minDepth: must not exceed maxDepth (0.9 > 0.8)');
    expect(bad({ keyLength: 32 })).toBe(
      'keyLength: 32 needs seqLen ≥ 65 (the needle: marker and 32 digits; the query: marker and 32 digits); seqLen is 64',
    );
    expect(bad({}, 8)).toMatch(/^keyLength: 4 needs seqLen ≥ 9 .*seqLen is 8$/);
    expect(validatePasskeyTask(PASSKEY_TASK, 9)).toEqual([]);
    // A bad seqLen is the run config's to report.
    expect(bad({}, NaN)).toBe('');
    expect(() => createPasskeyDataset({ kind: 'passkey', ...PASSKEY_TASK, keyLength: 40 }, { batchSize: 1, seqLen: T, seed: 1 })).toThrow(
      /keyLength: 40 needs seqLen ≥ 81/,
    );
  });
});

describe('passkey dataset', () => {
  const B = 3;
  const opts = (seed: number) => ({ batchSize: B, seqLen: T, seed });
  const spec = { kind: 'passkey' as const, ...PASSKEY_TASK };

  it('only the answers are scored; same seed same batches; validation fixed and held out', () => {
    const a = createPasskeyDataset(spec, opts(4));
    const b = createPasskeyDataset(spec, opts(4));
    const c = createPasskeyDataset(spec, opts(5));
    const [x, y, z] = [createBatch(B, T), createBatch(B, T), createBatch(B, T)];
    a.nextTrainBatch(x);
    b.nextTrainBatch(y);
    c.nextTrainBatch(z);
    expect(y).toEqual(x);
    expect(z).not.toEqual(x);
    const v = passkeyVocab(PASSKEY_TASK);
    const answers = new Set(passkeyAnswerPositions(T, K));
    for (let r = 0; r < B; r++) {
      const row = x.tokens.subarray(r * T, (r + 1) * T);
      const p = row.indexOf(v.needle);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(row[T - K]).toBe(v.query);
      for (let t = 0; t < T; t++) {
        const target = x.targets[r * T + t];
        if (!answers.has(t)) expect(target).toBe(IGNORE_TARGET);
        // The scored target of input t is the needle's digit t − (T − k).
        else expect(target).toBe(row[p + 1 + t - (T - K)]);
      }
    }
    expect(a.scoredPerSequence).toBe(K);
    expect(a.unigramEntropy()).toBeCloseTo(Math.log(PASSKEY_TASK.digits), 12);
    expect(a.vocabSize).toBe(v.size);
    expect(a.name).toBe('passkey-d10-k4-f8-depth0.15-0.8');
    const v1 = a.validationBatches(2);
    expect(a.validationBatches(2)).toEqual(v1);
    expect(b.validationBatches(2)).toEqual(v1);
    expect(v1[0]).not.toEqual(x);
  });
});

describe('passkey chance and answers in the run config', () => {
  it('chance is per digit (1/digits), a whole key digits^−k; recall keeps 1/values; text has none', () => {
    const c = passkeyPreset();
    expect(taskChance(c)).toBe(0.1);
    expect(taskKeyChance(c)).toBeCloseTo(1e-4, 15);
    expect(taskAnswerPositions(c)).toEqual([60, 61, 62, 63]);
    expect(taskAnswerLabel(c)).toBe('passkey digits');
    c.data.passkey!.digits = 16;
    c.data.passkey!.keyLength = 2;
    expect(taskChance(c)).toBe(1 / 16);
    expect(taskKeyChance(c)).toBe(1 / 256);
    expect(taskAnswerPositions(c)).toEqual([62, 63]);
    const r = recallPreset();
    expect(taskChance(r)).toBe(1 / 16);
    expect(taskKeyChance(r)).toBeNull();
    c.data = { source: 'copy', tokenizer: 'byte' };
    expect([taskChance(c), taskKeyChance(c), taskAnswerPositions(c), taskAnswerLabel(c)]).toEqual([null, null, null, null]);
  });
});

describe('answer scorer on hand-made logits (float64)', () => {
  // B = 2 sequences of T = 4, V = 5: answers at inputs 2 and 3.
  const shape = { B: 2, T: 4, V: 5 };
  const softmax = (logits: number[]) => {
    const m = Math.max(...logits);
    const e = logits.map((x) => Math.exp(x - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  };
  const flat = [0, 0, 0, 0, 0];
  // Row by row (r·T + t): the unscored rows are flat and never read.
  const logits = [
    flat,
    flat,
    [0, 3, 0, 0, 0], // r0 t2: argmax 1
    [0, 0, 2, 0, 1], // r0 t3: argmax 2
    flat,
    flat,
    [1, 0, 0, 4, 0], // r1 t2: argmax 3
    [0, 2, 0, 0, 2], // r1 t3: a tie between 1 and 4
  ];
  const probs = new Float64Array(logits.flatMap(softmax));
  const I = IGNORE_TARGET;

  it('counts an answer right only at a strict argmax; a sequence only when all its answers are', () => {
    const targets = new Int32Array([I, I, 1, 2, I, I, 3, 4]);
    const s = scoreAnswers([{ probs, targets }], shape, [2, 3]);
    const p = [softmax(logits[2])[1], softmax(logits[3])[2], softmax(logits[6])[3], softmax(logits[7])[4]];
    expect(s.answers).toBe(4);
    expect(s.correct).toBe(3); // the tie counts as wrong
    expect(s.accuracy).toBe(0.75);
    expect(s.sequences).toBe(2);
    expect(s.sequencesCorrect).toBe(1);
    expect(s.sequenceAccuracy).toBe(0.5);
    expect(s.accuracyByAnswer).toEqual([1, 0.5]); // the first digits right, one second digit
    expect(s.answersRight).toEqual(['11', '10']); // per sequence, per digit
    expect(s.meanPCorrect).toBeCloseTo(p.reduce((a, b) => a + b, 0) / 4, 15);
    expect(s.answerLoss).toBeCloseTo(-p.reduce((a, b) => a + Math.log(b), 0) / 4, 15);
  });

  it('wrong targets score 0; batches accumulate; bad targets and shapes throw', () => {
    const wrong = new Int32Array([I, I, 0, 0, I, I, 0, 0]);
    const right = new Int32Array([I, I, 1, 2, I, I, 3, 1]);
    expect(scoreAnswers([{ probs, targets: wrong }], shape, [2, 3])).toMatchObject({ correct: 0, accuracy: 0, sequencesCorrect: 0 });
    const t = new AnswerTally();
    t.add(probs, right, shape, [2, 3]);
    t.add(probs, wrong, shape, [2, 3]);
    expect(t.score()).toMatchObject({ answers: 8, correct: 3, sequences: 4, sequencesCorrect: 1, accuracyByAnswer: [2 / 4, 1 / 4] });
    expect(t.score().answersRight).toEqual(['11', '10', '00', '00']); // in the order added
    // Only the answer positions are read: scoring the second one alone.
    expect(scoreAnswers([{ probs, targets: right }], shape, [3]).correct).toBe(1);
    expect(() => scoreAnswers([{ probs, targets: new Int32Array([I, I, I, 2, I, I, 3, 4]) }], shape, [2, 3])).toThrow(
      /row 2 has target -?\d+, not an answer/,
    );
    expect(() => scoreAnswers([{ probs: probs.subarray(5), targets: right }], shape, [2, 3])).toThrow(/expected B·T·V = 40/);
    expect(() => scoreAnswers([{ probs, targets: right }], shape, [4])).toThrow(/answer position 4 outside \[0, 4\)/);
  });
});

describe('passkey accuracy by needle depth', () => {
  it('finds each sequence’s needle marker in a batch of generated sequences', () => {
    const task = PASSKEY_TASK;
    const rand = mulberry32(5);
    const seqs = Array.from({ length: 6 }, () => generatePasskeySequence(task, T, rand));
    const tokens = new Int32Array(seqs.length * T);
    seqs.forEach((q, b) => tokens.set(q.raw.subarray(0, T), b * T));
    expect(passkeyNeedlePositions(tokens, seqs.length, T, passkeyVocab(task).needle)).toEqual(seqs.map((q) => q.needle));
    tokens.fill(0, 2 * T, 3 * T); // sequence 2 loses its needle
    expect(() => passkeyNeedlePositions(tokens, seqs.length, T, passkeyVocab(task).needle)).toThrow(
      /sequence 2 holds no needle marker \(token 8\)/,
    );
    expect(() => passkeyNeedlePositions(tokens, seqs.length + 1, T, 8)).toThrow(/expected B·T/);
  });

  it('splits the needle range into equal ranges, each with its whole keys and digits; an empty range is null', () => {
    // [20, 29] in 4: edges 20, 22, 25, 27, 30 → [20, 21], [22, 24], [25, 26], [27, 29].
    const bins = accuracyByDepth([20, 21, 24, 29, 27], ['11', '10', '01', '00', '11'], [20, 29], 4);
    expect(bins).toEqual([
      { from: 20, to: 21, sequences: 2, keysRight: 1, wholeKeys: 0.5, accuracyByAnswer: [1, 0.5] },
      { from: 22, to: 24, sequences: 1, keysRight: 0, wholeKeys: 0, accuracyByAnswer: [0, 1] },
      { from: 25, to: 26, sequences: 0, keysRight: 0, wholeKeys: null, accuracyByAnswer: null },
      { from: 27, to: 29, sequences: 2, keysRight: 1, wholeKeys: 0.5, accuracyByAnswer: [0.5, 0.5] },
    ]);
    // More ranges than positions: one per position. One range: the whole score.
    expect(accuracyByDepth([5, 6, 6], ['1', '0', '1'], [5, 6], 4).map((b) => [b.from, b.to, b.sequences, b.wholeKeys])).toEqual([
      [5, 5, 1, 1],
      [6, 6, 2, 0.5],
    ]);
    expect(accuracyByDepth([20, 29], ['10', '11'], [20, 29], 1)).toEqual([
      { from: 20, to: 29, sequences: 2, keysRight: 1, wholeKeys: 0.5, accuracyByAnswer: [1, 0.5] },
    ]);
  });

  it('refuses needles outside the range, mismatched counts and a bad bin count', () => {
    expect(() => accuracyByDepth([19], ['1'], [20, 29], 4)).toThrow(/needle 19 of sequence 0 outside \[20, 29\]/);
    expect(() => accuracyByDepth([20, 21], ['1'], [20, 29], 4)).toThrow(/2 needles but 1 scored sequences/);
    expect(() => accuracyByDepth([20], ['1'], [20, 29], 0)).toThrow(/bins must be an integer ≥ 1/);
  });
});
