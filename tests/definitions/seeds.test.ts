// Seeds are full 53-bit integers (issue 10): N and N + k·2^32 give different weights and data (they
// aliased when the generators truncated seeds to 32 bits), while every seed below 2^32 keeps the
// exact numbers it gave before (runs, goldens and checkpoints made earlier stay reproducible).
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { createBatch, createDataset } from '../../src/train/data/datasets';
import { preset } from '../../src/train/presets/presets';
import { mulberry32, seedWord, subSeed } from '../../src/util/random';

const draws = (f: () => number, n = 8) => Array.from({ length: n }, f);

describe('53-bit seeds', () => {
  it('seeds below 2^32 are their own generator word: the streams of before, bit for bit', () => {
    for (const s of [0, 1, 7, 12345, 2 ** 31, 2 ** 32 - 1]) expect(seedWord(s)).toBe(s);
    // mulberry32(1) and subSeed(1, 'x') as they were before 53-bit seeds (recorded values).
    expect(mulberry32(1)()).toBe(0.6270739405881613);
    expect(subSeed(1, 'tok_emb')).toBe(subSeedTruncated(1, 'tok_emb'));
  });

  it('N and N + k·2^32 never share a generator word (k = 1 … 2^21 − 1 samples), and differ in every stream', () => {
    const N = 12345;
    const words = new Set<number>([seedWord(N)]);
    for (const k of [1, 2, 3, 255, 65536, 2 ** 21 - 1]) {
      const s = N + k * 2 ** 32;
      expect(Number.isSafeInteger(s)).toBe(true);
      words.add(seedWord(s));
      expect(draws(mulberry32(s))).not.toEqual(draws(mulberry32(N)));
      expect(subSeed(s, 'text:brown:train')).not.toBe(subSeed(N, 'text:brown:train'));
    }
    expect(words.size).toBe(7);
    expect(seedWord(Number.MAX_SAFE_INTEGER)).not.toBe(seedWord(2 ** 32 - 1));
  });

  it('a run seeded N + 2^32 starts from other weights and draws other batches than seed N', () => {
    const specs = paramSpecs(preset('tiny').model);
    const a = initParams(specs, 5).get(specs[0].name)!;
    const b = initParams(specs, 5 + 2 ** 32).get(specs[0].name)!;
    expect(Array.from(b.slice(0, 16))).not.toEqual(Array.from(a.slice(0, 16)));
    const batch = (seed: number) => {
      const ds = createDataset({ kind: 'random', vocabSize: 256 }, { batchSize: 2, seqLen: 16, seed });
      const out = createBatch(2, 16);
      ds.nextTrainBatch(out);
      return Array.from(out.tokens);
    };
    expect(batch(5 + 2 ** 32)).not.toEqual(batch(5));
    expect(batch(5 + 2 ** 32)).toEqual(batch(5 + 2 ** 32)); // still deterministic
  });
});

/** subSeed as it was (seed truncated to 32 bits), for the seeds where nothing may change. */
function subSeedTruncated(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
