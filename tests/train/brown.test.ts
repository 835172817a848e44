import { beforeAll, describe, expect, it } from 'vitest';

import { cleanBrown, parseBrownCategories } from '../../src/train/data/brown';
import { type BrownDocument, loadBrownDocuments, loadBrownText } from '../../src/train/data/brown-node';
import { createDataset, splitTextForValidation } from '../../src/train/data/datasets';

describe('cleanBrown', () => {
  it("strips tags, turns ``/'' into quotes and spaces punctuation like English", () => {
    const tagged = [
      '',
      '',
      "\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ,/, that/cs Atlanta's/np$ 1-1/2/cd mills/nns (/( sic/rb )/) were/bed won/vbn by/in Ivan/np Allen/np Jr./np ./.",
      'It/pps asked/vbd :/: why/wrb ?/.',
      "Cut/vb 1/8''/nn ''/'' brass/nn ./.",
      '',
      '',
      'Merger/nn-hl proposed/vbn-hl',
      "However/wrb ,/, he/pps wrote/vbd '/' Don't/do* worry/vb '/' --/-- then/rb left/vbd ;/. ``/`` Bye/uh !/. ''/''",
      '',
    ].join('\n');
    expect(cleanBrown(tagged)).toBe(
      [
        `The jury said "no evidence", that Atlanta's 1-1/2 mills (sic) were won by Ivan Allen Jr. It asked: why? Cut 1/8" brass.`,
        'Merger proposed',
        `However, he wrote 'Don't worry'--then left; "Bye!"`,
      ].join('\n'),
    );
  });

  it('never emits a blank line (a blank line separates documents)', () => {
    expect(cleanBrown('\n\n\tA/at b/nn ./.\n\n\n\n\tC/at d/nn ./.\n\n')).toBe('A b.\nC d.');
  });

  it('parses cats.txt entries', () => {
    expect(parseBrownCategories('ca01 news\ncb02 editorial\n\nbogus line\n')).toEqual([
      { id: 'ca01', category: 'news' },
      { id: 'cb02', category: 'editorial' },
    ]);
  });
});

describe('full Brown corpus', () => {
  let docs: BrownDocument[];
  let text: string;
  let loadMs: number;
  beforeAll(() => {
    const t0 = performance.now();
    docs = loadBrownDocuments();
    text = loadBrownText();
    loadMs = (performance.now() - t0) / 2;
  });

  it('loads 500 clean documents fast', () => {
    console.log(`Brown: ${docs.length} documents, ${text.length} chars, loaded and cleaned in ${loadMs.toFixed(0)} ms`);
    expect(docs.length).toBe(500);
    expect(new Set(docs.map((d) => d.category)).size).toBe(15);
    // Measured 5,958,976 chars (the tagged files are ~10 MB).
    expect(text.length).toBeGreaterThan(5_800_000);
    expect(text.length).toBeLessThan(6_100_000);
    expect(text.split('\n\n').length).toBe(500);
    expect(loadMs).toBeLessThan(5000); // measured ~0.5 s
    expect(text).not.toMatch(/[A-Za-z]\/(at|nn|nns|vbd|in|jj|rb|np)[ ,.]/); // no tags left
    expect(text).not.toContain('``');
    expect(text).not.toContain("''");
    expect(text.startsWith('The Fulton County Grand Jury said Friday')).toBe(true);
  });

  it('splits train/val disjointly by document (450/50), both keeping every document once', () => {
    const split = splitTextForValidation(text, 0.1);
    expect(split.byDocument).toBe(true);
    expect([split.trainDocuments, split.valDocuments]).toEqual([450, 50]);
    const train = split.train.split('\n\n');
    const val = split.val.split('\n\n');
    const trainSet = new Set(train);
    expect(val.filter((d) => trainSet.has(d))).toEqual([]);
    expect(new Set([...train, ...val])).toEqual(new Set(docs.map((d) => d.text)));
    // deterministic, and independent of any run seed
    expect(splitTextForValidation(text, 0.1)).toEqual(split);
  });

  it('byte dataset: sizes, timing, val windows come from held-out documents, unigram entropy ≈ 3.08 nats', () => {
    const t0 = performance.now();
    const ds = createDataset({ kind: 'text', name: 'brown', text, tokenizer: 'byte' }, { batchSize: 4, seqLen: 96, seed: 3 });
    const ms = performance.now() - t0;
    const h = ds.unigramEntropy();
    console.log(
      `Brown byte: train ${ds.trainTokens} val ${ds.valTokens} tokens, built in ${ms.toFixed(0)} ms, unigram H = ${h.toFixed(4)} nats`,
    );
    expect(ds.vocabSize).toBe(256);
    expect(ds.trainTokens + ds.valTokens).toBe(text.length - 2); // ASCII; one "\n\n" joint fewer
    expect(ds.valTokens / (ds.trainTokens + ds.valTokens)).toBeGreaterThan(0.05);
    expect(ds.valTokens / (ds.trainTokens + ds.valTokens)).toBeLessThan(0.15);
    expect(ms).toBeLessThan(3000); // measured ~25 ms
    expect(h).toBeGreaterThan(2.95); // measured 3.0835
    expect(h).toBeLessThan(3.2);
    const split = splitTextForValidation(text, 0.1);
    const tok = ds.tokenizer!;
    for (const batch of ds.validationBatches(2)) {
      for (let b = 0; b < 4; b++) {
        const window = tok.decode(batch.tokens.subarray(b * 96, (b + 1) * 96));
        expect(split.val.includes(window)).toBe(true);
        expect(split.train.includes(window)).toBe(false);
      }
    }
  });

  it('gpt2 dataset: tokenizes the whole corpus in seconds, unigram entropy ≈ 7.3 nats', () => {
    const t0 = performance.now();
    const ds = createDataset({ kind: 'text', name: 'brown', text, tokenizer: 'gpt2' }, { batchSize: 2, seqLen: 32, seed: 3 });
    const ms = performance.now() - t0;
    const h = ds.unigramEntropy();
    console.log(
      `Brown gpt2: train ${ds.trainTokens} val ${ds.valTokens} tokens, built in ${ms.toFixed(0)} ms, unigram H = ${h.toFixed(4)} nats`,
    );
    expect(ds.vocabSize).toBe(50257);
    expect(ds.trainTokens + ds.valTokens).toBeGreaterThan(1_200_000); // measured 1,287,692
    expect(ds.trainTokens + ds.valTokens).toBeLessThan(1_400_000);
    expect(ms).toBeLessThan(8000); // measured ~0.6 s
    expect(h).toBeGreaterThan(7.1); // measured 7.3124
    expect(h).toBeLessThan(7.5);
  });
});
