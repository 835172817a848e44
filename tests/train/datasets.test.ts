import { describe, expect, it } from 'vitest';

import { InvalidConfigError } from '../../src/definitions/config-issue';
import { unigramEntropyOf } from '../../src/train/data/batch';
import { type Batch, createBatch, createDataset, type DatasetSpec, splitTextForValidation } from '../../src/train/data/datasets';

const B = 3;
const T = 17; // odd on purpose
const opts = (seed: number) => ({ batchSize: B, seqLen: T, seed });

const SENTENCES = [
  'The quick brown fox jumps over the lazy dog.',
  'Pack my box with five dozen liquor jugs.',
  'How vexingly quick daft zebras jump!',
  'Sphinx of black quartz, judge my vow.',
  'Naïve café owners serve crème brûlée — très bien.',
];
/** 40 small documents separated by blank lines. */
const MULTI_DOC = Array.from({ length: 40 }, (_, i) => `Document ${i}. ${SENTENCES[i % 5]} ${SENTENCES[(i * 3) % 5]}`).join('\n\n');

function textSpec(text: string, tokenizer: 'byte' | 'gpt2' = 'byte', valFraction?: number): DatasetSpec {
  return { kind: 'text', name: 'sample', text, tokenizer, valFraction };
}

function batches(spec: DatasetSpec, seed: number, n: number): Batch[] {
  const ds = createDataset(spec, opts(seed));
  return Array.from({ length: n }, () => {
    const out = createBatch(B, T);
    ds.nextTrainBatch(out);
    return out;
  });
}

/** Row b of a batch as its T+1 underlying tokens (inputs plus the last target). */
function row(batch: Batch, b: number): number[] {
  return [...batch.tokens.subarray(b * T, (b + 1) * T), batch.targets[(b + 1) * T - 1]];
}

const specs: [string, DatasetSpec][] = [
  ['random', { kind: 'random', vocabSize: 50 }],
  ['copy', { kind: 'copy', vocabSize: 50 }],
  ['text/byte', textSpec(MULTI_DOC)],
  ['text/gpt2', textSpec(MULTI_DOC.repeat(3), 'gpt2')],
];

describe.each(specs)('%s dataset', (_label, spec) => {
  it('targets are the tokens shifted by one, ids in range', () => {
    const ds = createDataset(spec, opts(1));
    for (const batch of [...batches(spec, 1, 3), ...ds.validationBatches(2)]) {
      expect(batch.tokens.length).toBe(B * T);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t + 1 < T; t++) expect(batch.targets[b * T + t]).toBe(batch.tokens[b * T + t + 1]);
      }
      for (const id of [...batch.tokens, ...batch.targets]) {
        expect(id >= 0 && id < ds.vocabSize).toBe(true);
      }
    }
  });

  it('same seed gives the same batches, a different seed different ones', () => {
    const a = batches(spec, 7, 3);
    expect(batches(spec, 7, 3)).toEqual(a);
    expect(batches(spec, 8, 3)).not.toEqual(a);
  });

  it('validation batches are the same every call and untouched by training draws', () => {
    const ds = createDataset(spec, opts(5));
    const first = ds.validationBatches(3);
    expect(first.length).toBe(3);
    const out = createBatch(B, T);
    for (let i = 0; i < 4; i++) ds.nextTrainBatch(out);
    expect(ds.validationBatches(3)).toEqual(first);
    expect(ds.validationBatches(2)).toEqual(first.slice(0, 2));
    expect(first[1]).not.toEqual(first[0]);
  });

  it('refuses output arrays of the wrong size', () => {
    const ds = createDataset(spec, opts(1));
    expect(() => ds.nextTrainBatch(createBatch(B, T + 1))).toThrow(/B\*T/);
  });
});

describe('random dataset (leakage control)', () => {
  it('has unigram entropy ln V, and its samples are uniform (empirical entropy within 0.01 of ln V)', () => {
    const V = 16;
    const ds = createDataset({ kind: 'random', vocabSize: V }, opts(2));
    expect(ds.unigramEntropy()).toBe(Math.log(V));
    expect(ds.tokenizer).toBeNull();
    expect(ds.trainTokens).toBe(Number.POSITIVE_INFINITY);
    const seen: number[] = [];
    const out = createBatch(B, T);
    for (let i = 0; i < 400; i++) {
      ds.nextTrainBatch(out);
      seen.push(...out.tokens);
    }
    const h = unigramEntropyOf(seen, V); // 20,400 samples: bias ≈ (V−1)/(2N) ≈ 4e-4
    expect(Math.abs(h - Math.log(V))).toBeLessThan(0.01);
  });
});

describe('copy dataset', () => {
  it('the second half of each sequence repeats the first half (default segment)', () => {
    const ds = createDataset({ kind: 'copy', vocabSize: 1000 }, { batchSize: 2, seqLen: 15, seed: 4 });
    const out = createBatch(2, 15);
    ds.nextTrainBatch(out);
    for (let b = 0; b < 2; b++) {
      const r = [...out.tokens.subarray(b * 15, b * 15 + 15), out.targets[b * 15 + 14]];
      expect(r.slice(8)).toEqual(r.slice(0, 8));
      expect(new Set(r.slice(0, 8)).size).toBeGreaterThan(4); // first half is random, not constant
    }
  });

  it('with segment s alternates s random tokens and their copy; leftover positions are random', () => {
    const ds = createDataset({ kind: 'copy', vocabSize: 1000, segment: 3 }, opts(4));
    const [batch] = ds.validationBatches(1);
    for (let b = 0; b < B; b++) {
      const r = row(batch, b); // 18 tokens: 3 pairs of (3 random, 3 copies)
      for (let i = 0; i < r.length; i++) if (i % 6 >= 3) expect(r[i]).toBe(r[i - 3]);
      expect(r.slice(6, 9)).not.toEqual(r.slice(0, 3));
    }
  });

  it('rejects a segment that does not fit twice in seqLen+1', () => {
    expect(() => createDataset({ kind: 'copy', vocabSize: 10, segment: 10 }, opts(1))).toThrow(/segment/);
    expect(() => createDataset({ kind: 'copy', vocabSize: 10, segment: 0 }, opts(1))).toThrow(/segment/);
    expect(() => createDataset({ kind: 'random', vocabSize: 1 }, opts(1))).toThrow(/vocabSize/);
  });
});

describe('text dataset', () => {
  it('holds out 10% of documents: disjoint from train, windows drawn from the right split', () => {
    const split = splitTextForValidation(MULTI_DOC, 0.1);
    expect(split.byDocument).toBe(true);
    expect([split.trainDocuments, split.valDocuments]).toEqual([36, 4]);
    const train = new Set(split.train.split('\n\n'));
    const val = split.val.split('\n\n');
    expect(val.every((d) => !train.has(d))).toBe(true);
    expect(new Set([...train, ...val])).toEqual(new Set(MULTI_DOC.split('\n\n')));

    const ds = createDataset(textSpec(MULTI_DOC), opts(9));
    const bytes = (s: string) => new TextEncoder().encode(s).length;
    expect(ds.trainTokens).toBe(bytes(split.train));
    expect(ds.valTokens).toBe(bytes(split.val));
    const out = createBatch(B, T);
    for (let i = 0; i < 5; i++) {
      ds.nextTrainBatch(out);
      for (let b = 0; b < B; b++) {
        const window = ds.tokenizer!.decode(out.tokens.subarray(b * T, (b + 1) * T));
        if (!window.includes('\ufffd')) expect(split.train.includes(window)).toBe(true);
      }
    }
  });

  it('splits a text without document breaks by its last 10% of characters', () => {
    const single = SENTENCES.join(' ').repeat(10);
    const split = splitTextForValidation(single, 0.1);
    expect(split.byDocument).toBe(false);
    expect(split.train + split.val).toBe(single);
    expect(split.val.length).toBe(single.length - Math.floor(single.length * 0.9));
    const ds = createDataset(textSpec(single), opts(1));
    expect(ds.valTokens).toBe(new TextEncoder().encode(split.val).length);
  });

  it('valFraction 0 gives no validation batches; CRLF texts split like LF ones', () => {
    const ds = createDataset(textSpec(MULTI_DOC, 'byte', 0), opts(1));
    expect(ds.valTokens).toBe(0);
    expect(ds.validationBatches(4)).toEqual([]);
    expect(splitTextForValidation(MULTI_DOC.replaceAll('\n', '\r\n'), 0.1)).toEqual(splitTextForValidation(MULTI_DOC, 0.1));
  });

  it('explains a text too short for the sequence length, and a bad valFraction', () => {
    expect(() => createDataset(textSpec('tiny text'), opts(1))).toThrow(/seqLen\+1/);
    expect(() => createDataset(textSpec(MULTI_DOC), { batchSize: 1, seqLen: 600, seed: 1 })).toThrow(/validation split/);
    expect(() => createDataset(textSpec(MULTI_DOC, 'byte', 1), opts(1))).toThrow(/valFraction/);
    expect(() => createDataset(textSpec(MULTI_DOC), { batchSize: 0, seqLen: 8, seed: 1 })).toThrow(/batchSize/);
  });

  it('a bad dataset setting is an InvalidConfigError naming the field', () => {
    const fieldsOf = (f: () => unknown): string[] => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidConfigError);
        expect((e as Error).name).toBe('InvalidConfigError');
        return (e as InvalidConfigError).issues.map((i) => i.field);
      }
      throw new Error('expected a throw');
    };
    expect(fieldsOf(() => createDataset({ kind: 'random', vocabSize: 1 }, opts(1)))).toEqual(['vocabSize']);
    expect(fieldsOf(() => createDataset({ kind: 'copy', vocabSize: 1.5 }, opts(1)))).toEqual(['vocabSize']);
    expect(fieldsOf(() => createDataset({ kind: 'copy', vocabSize: 50, segment: T }, opts(1)))).toEqual(['segment']);
    expect(fieldsOf(() => createDataset(textSpec('tiny text'), opts(1)))).toEqual(['text']);
    expect(fieldsOf(() => createDataset(textSpec(MULTI_DOC), { batchSize: 1, seqLen: 600, seed: 1 }))).toEqual(['text']);
    expect(fieldsOf(() => splitTextForValidation(MULTI_DOC, -0.5))).toEqual(['valFraction']);
  });

  it('unigram entropy matches a direct count over the training bytes', () => {
    const ds = createDataset(textSpec(MULTI_DOC), opts(1));
    const split = splitTextForValidation(MULTI_DOC, 0.1);
    const counts = new Map<number, number>();
    const bytes = new TextEncoder().encode(split.train);
    for (const x of bytes) counts.set(x, (counts.get(x) ?? 0) + 1);
    let h = 0;
    for (const c of counts.values()) h -= (c / bytes.length) * Math.log(c / bytes.length);
    expect(ds.unigramEntropy()).toBeCloseTo(h, 12);
    expect(h).toBeGreaterThan(2);
    expect(h).toBeLessThan(Math.log(256));
  });
});
