// The long passkey preset (src/train/presets/passkey-long-preset.ts), CPU only: valid, mqar-long's
// model on the passkey task at T = 1,024; every needle token beyond what window-only attention
// reaches from every answer and past block 0; NSA reading under a quarter of dense attention's keys
// per query; its sequence-length warm-up (half the steps at T = 256), which a learning grid's --steps
// scales; and a sequence length the task cannot be generated at refused, naming the field.
import { describe, expect, it } from 'vitest';

import { InvalidConfigError } from '../../src/definitions/config-issue';
import { keysPerQuery } from '../../src/definitions/model-flops';
import { validateRunConfig } from '../../src/train/config';
import { generatePasskeySequence, passkeyNeedleRange, passkeyVocab } from '../../src/train/data/passkey';
import { gridPoints, learnPresetConfig } from '../../src/train/learn/grid';
import { mqarPresetConfig } from '../../src/train/presets/mqar-preset';
import { PASSKEY_LONG_TASK, passkeyLongPreset } from '../../src/train/presets/passkey-long-preset';
import { mulberry32 } from '../../src/util/random';

const c = passkeyLongPreset();
const T = c.model.seqLen;
const K = PASSKEY_LONG_TASK.keyLength;

describe('passkey-long preset', () => {
  it('is valid: mqar-long’s attention-only model with a key convolution and RoPE, on the passkey task at T = 1,024', () => {
    expect(validateRunConfig(c)).toEqual([]);
    expect(T).toBe(1024);
    const long = mqarPresetConfig('mqar-long');
    expect({ ...c.model, vocabSize: 0 }).toEqual({ ...long.model, vocabSize: 0, nKvGroups: 2, ropeTheta: 10000 });
    expect([c.model.ffnHidden, c.model.shortConv, c.model.posEncoding]).toEqual([0, 4, 'rope']);
    expect(c.model.vocabSize).toBe(passkeyVocab(PASSKEY_LONG_TASK).size);
    expect(c.data).toEqual({ source: 'passkey', tokenizer: 'byte', passkey: PASSKEY_LONG_TASK });
    expect(learnPresetConfig('passkey-long')).toEqual(c);
    // Its sequence-length warm-up: the first 1,500 of 4,000 steps at T = 256.
    expect([c.train.steps, c.train.shortSeqSteps, c.train.shortSeqLen]).toEqual([4000, 1500, 256]);
    c.data.passkey!.digits = 3;
    expect(passkeyLongPreset().data.passkey!.digits).toBe(10);
  });

  it('every needle token lies beyond the window’s reach from every answer, and past block 0', () => {
    const m = passkeyLongPreset().model;
    const reach = m.nLayers * (m.nsa!.w - 1 + m.shortConv! - 1);
    const [lo, hi] = passkeyNeedleRange(PASSKEY_LONG_TASK, T);
    expect(lo).toBeGreaterThanOrEqual(m.nsa!.lSel);
    // The last needle digit hi + k against the first answer input T − k.
    expect(T - K - (hi + K)).toBeGreaterThan(reach);
    const rand = mulberry32(5);
    for (let n = 0; n < 500; n++) {
      const s = generatePasskeySequence(PASSKEY_LONG_TASK, T, rand);
      expect(s.needle).toBeGreaterThanOrEqual(lo);
      expect(Math.min(...s.answerPositions) - Math.max(...s.keyPositions)).toBeGreaterThan(reach);
    }
  });

  it('NSA reads under a quarter of dense attention’s keys per query on average', () => {
    const m = passkeyLongPreset().model;
    let nsa = 0;
    for (let t = 0; t < T; t++) nsa += keysPerQuery(m, t);
    expect(nsa / T / ((T + 1) / 2)).toBeLessThan(0.25);
  });

  it('a learning grid of NSA, window and dense; a sequence too short for the key refused, naming the field', () => {
    const points = gridPoints({ preset: 'passkey-long', mechanisms: ['nsa', 'window', 'dense'], seeds: [1], target: 0.99 });
    expect(points.map((p) => [p.mechanism, p.config.model.attention])).toEqual([
      ['nsa', 'nsa'],
      ['window', 'window'],
      ['dense', 'dense'],
    ]);
    // --steps keeps the warm-up's share of the schedule (learn.sh's dense and window runs).
    const short = (steps: number) =>
      gridPoints({ preset: 'passkey-long', mechanisms: ['dense'], seeds: [1], target: 0.99, steps })[0].config.train;
    expect([1500, 500, 2].map((n) => [short(n).steps, short(n).shortSeqSteps])).toEqual([
      [1500, 563],
      [500, 188],
      [2, 1],
    ]);
    let fields: string[] = [];
    try {
      gridPoints({ preset: 'passkey-long', mechanisms: ['dense'], seeds: [1], target: 0.99 }, (r) => (r.model.seqLen = 2 * K));
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidConfigError);
      fields = (e as InvalidConfigError).issues.map((i) => i.field);
    }
    expect(fields).toContain('data.passkey.keyLength');
  });
});
