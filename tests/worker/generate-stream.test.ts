// Streaming generation (the loop generate() collects) yields tokens lazily, one decoder step per
// token, with selections that stay the rows each token's reads were counted from; the page-side
// streamer tokenizes, batches, decodes and cancels, and bad prompts fail readably.
import { describe, expect, it } from 'vitest';

import { cpuTokenDecoder, generate, type GenerateOptions, generateStream, type StreamStep } from '../../src/decode/generate';
import { readsFormula } from '../../src/reference/decoder';
import { createDataset } from '../../src/train/data/datasets';
import { parseTokenIds, TokenStreamer } from '../../src/worker/generation';
import type { StreamedToken } from '../../src/worker/protocol';
import { DENSE, nsaModel, randomParams } from '../decode/helpers';

const opts = { maxTokens: 20, temperature: 0.9, topK: 5, seed: 7 };

type Params = ReturnType<typeof randomParams>;
/** The stream on a fresh float64 CPU decoder. */
const stream = (c: typeof DENSE, p: Params, prompt: number[], o: GenerateOptions) => generateStream(c, cpuTokenDecoder(c, p), prompt, o);
async function all(c: typeof DENSE, p: Params, prompt: number[], o: GenerateOptions): Promise<StreamStep[]> {
  const out: StreamStep[] = [];
  for await (const s of stream(c, p, prompt, o)) out.push(s);
  return out;
}

describe('generateStream', () => {
  for (const [name, c] of [
    ['dense', DENSE],
    ['nsa', nsaModel()],
  ] as const) {
    it(`${name}: yields generate()'s tokens, positions and reads one at a time; a stream cut short is their prefix`, async () => {
      const p = randomParams(c, 3);
      const prompt = [1, 5, 2];
      const want = await generate(c, cpuTokenDecoder(c, p), prompt, opts, (ids) => ids.join(' '));
      expect(want.tokens.length).toBeGreaterThan(5);
      // Pulled one by one, then dropped: the first 5 tokens equal the full run's first 5.
      const s5 = stream(c, p, prompt, opts);
      const head = [];
      for (let i = 0; i < 5; i++) head.push(await s5.next());
      expect(head.every((r) => !r.done)).toBe(true);
      expect(head.map((r) => (r.done ? -1 : r.value.token))).toEqual(want.tokens.slice(0, 5));
      const got = await all(c, p, prompt, opts);
      expect(got.map((s) => s.token)).toEqual(want.tokens);
      expect(got.map((s) => s.t)).toEqual(want.tokens.map((_, i) => prompt.length - 1 + i));
      expect(got.map((s) => s.reads)).toEqual(want.steps.map((s) => s.reads));
      if (name === 'nsa') {
        // One selection row set per layer, G·nSel entries, each group's row giving the formula its
        // reads were counted with (checked after the whole run: the rows are the token's own).
        const nsa = c.nsa!;
        for (const s of got) {
          expect(s.selection).toHaveLength(c.nLayers);
          for (const [layer, row] of s.selection.entries()) {
            expect(row).toHaveLength(c.nKvGroups * nsa.nSel);
            for (let g = 0; g < c.nKvGroups; g++) {
              const r = s.reads.find((x) => x.layer === layer && x.group === g)!;
              expect(readsFormula(s.t, row.subarray(g * nsa.nSel, (g + 1) * nsa.nSel), nsa)).toEqual(r.formula);
            }
          }
        }
      } else for (const s of got) expect(s.selection).toEqual([]);
    });
  }

  it('stops at a full context like generate()', async () => {
    const c = DENSE; // seqLen 13
    const p = randomParams(c, 4);
    const prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const got = await all(c, p, prompt, { ...opts, maxTokens: 50 });
    expect(got).toHaveLength(c.seqLen - prompt.length);
    expect(got.map((s) => s.token)).toEqual((await generate(c, cpuTokenDecoder(c, p), prompt, { ...opts, maxTokens: 50 }, String)).tokens);
  });

  it('refuses an empty prompt, a prompt filling the context and bad sampling options', async () => {
    const p = randomParams(DENSE, 1);
    await expect(stream(DENSE, p, [], opts).next()).rejects.toThrow(/prompt is empty/);
    await expect(stream(DENSE, p, new Array(13).fill(1), opts).next()).rejects.toThrow(/context holds 13/);
    await expect(stream(DENSE, p, [1], { ...opts, temperature: -1 }).next()).rejects.toThrow(/temperature/);
    await expect(stream(DENSE, p, [1], { ...opts, topP: 0 }).next()).rejects.toThrow(/top-p/);
    await expect(stream(DENSE, p, [99], opts).next()).rejects.toThrow(/outside the model's vocabulary/);
  });
});

describe('TokenStreamer', () => {
  const text = 'the quick brown fox jumps over the lazy dog. '.repeat(40);

  it('byte text: tokenizes the prompt, streams every token in order, and the pieces add up to the text', async () => {
    const c = { ...DENSE, vocabSize: 256, seqLen: 24 };
    const data = createDataset({ kind: 'text', name: 't', text, tokenizer: 'byte' }, { batchSize: 1, seqLen: 24, seed: 1 });
    const s = new TokenStreamer(c, data);
    const got: StreamedToken[] = [];
    let prompt: number[] = [];
    const r = await s.run(
      randomParams(c, 2),
      12,
      { prompt: 'the ', maxTokens: 10, temperature: 1, topK: 0, seed: 3 },
      (st) => (prompt = st.promptTokens),
      (t) => got.push(...t),
    );
    expect(prompt).toEqual([116, 104, 101, 32]);
    expect(r.promptTokens).toEqual(prompt);
    expect(got.map((t) => t.index)).toEqual([...Array(10).keys()]);
    expect(got.map((t) => t.token)).toEqual(r.tokens);
    expect(got.map((t) => t.t)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(r.stop).toBe('tokens');
    expect(r.step).toBe(12);
    expect(r.tokens).toEqual(
      (await all(c, randomParams(c, 2), prompt, { maxTokens: 10, temperature: 1, topK: 0, seed: 3, vocabLimit: 256 })).map((x) => x.token),
    );
    // Valid UTF-8 or not, the decoded text is what the byte tokenizer gives for all tokens together.
    expect(r.text).toBe(data.tokenizer!.decode(r.tokens));
  });

  it('synthetic data: the prompt is token ids, pieces are [id]; cancel ends it early', async () => {
    const c = DENSE;
    const data = createDataset({ kind: 'random', vocabSize: 37 }, { batchSize: 1, seqLen: 13, seed: 1 });
    const s = new TokenStreamer(c, data);
    const got: StreamedToken[] = [];
    const run = s.run(
      randomParams(c, 5),
      0,
      { prompt: '3, 4 5', maxTokens: 9, temperature: 0, topK: 0, seed: 1, tokenDelayMs: 5 },
      () => {},
      (t) => {
        got.push(...t);
        s.cancel();
      },
    );
    const r = await run;
    expect(r.promptTokens).toEqual([3, 4, 5]);
    expect(r.stop).toBe('cancelled');
    expect(r.tokens.length).toBeLessThan(9);
    expect(got.map((t) => t.text)).toEqual(got.map((t) => `[${t.token}]`));
    expect(() => parseTokenIds('a b', 37)).toThrow(/token ids/);
    expect(() => parseTokenIds('3 40', 37)).toThrow(/outside this dataset's vocabulary/);
    expect(parseTokenIds(' 1 2,3 ', 37)).toEqual([1, 2, 3]);
  });

  it('a new generation cancels the running one', async () => {
    const c = DENSE;
    const data = createDataset({ kind: 'random', vocabSize: 37 }, { batchSize: 1, seqLen: 13, seed: 1 });
    const s = new TokenStreamer(c, data);
    const p = randomParams(c, 6);
    const req = { prompt: '1', maxTokens: 20, temperature: 0, topK: 0, seed: 1, tokenDelayMs: 20 };
    const first = s.run(
      p,
      0,
      req,
      () => {},
      () => {},
    );
    await new Promise((r) => setTimeout(r, 30));
    const second = s.run(
      p,
      0,
      req,
      () => {},
      () => {},
    );
    expect((await first).stop).toBe('cancelled');
    expect((await second).stop).toBe('context');
  });
});
