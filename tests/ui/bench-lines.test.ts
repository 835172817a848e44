// The benchmark view's reduction of bench:attention lines: per-token times and keys per query by T
// (the other mechanisms beside NSA and dense),
// the crossover (NSA below dense from there on), the JSON-lines download and the T field.
import { describe, expect, it } from 'vitest';

import { benchJsonl, type BenchLine, benchSeries, crossover, parseContextLengths } from '../../src/ui/bench/bench-lines';

const train = (T: number, nsa: number, dense: number): BenchLine => ({
  kind: 'nsa_vs_dense',
  T,
  nsa_ms: nsa,
  dense_ms: dense,
  nsa_keys_per_head: T * 10,
  dense_keys_per_head: (T * (T + 1)) / 2,
});
const decode = (T: number, nsa: number, dense: number): BenchLine => ({
  kind: 'decode',
  T,
  nsa_ms: nsa + 1,
  dense_ms: dense + 1,
  nsa_attention_ms: nsa,
  dense_attention_ms: dense,
  nsa_keys_per_query: { cmp: 1, sel: 2, win: 3, total: 6 },
  dense_keys_per_query: T,
});

describe('bench lines', () => {
  it('per-token training time and keys per query, decode attention time, sorted by T; other kinds ignored', () => {
    const s = benchSeries([{ kind: 'adapter' }, train(2048, 400, 300), train(1024, 100, 50), decode(1024, 0.5, 0.4), { kind: 'summary' }]);
    expect(s.train).toEqual([
      { T: 1024, nsa: 100 / 1024, dense: 50 / 1024 },
      { T: 2048, nsa: 400 / 2048, dense: 300 / 2048 },
    ]);
    expect(s.trainKeys[0]).toEqual({ T: 1024, nsa: 10, dense: 1025 / 2 });
    expect(s.decode).toEqual([{ T: 1024, nsa: 0.5, dense: 0.4 }]);
    expect(s.decodeKeys).toEqual([{ T: 1024, nsa: 6, dense: 1024 }]);
    expect(() => benchSeries([{ kind: 'decode', T: 1 }])).toThrow(/field nsa_ms is not a finite number/);
  });

  it("the other mechanisms join their T's point: training ms per token and mean keys, decode attention ms and keys; skipped lines add nothing", () => {
    const s = benchSeries([
      train(1024, 100, 50),
      { kind: 'mechanism_train', T: 1024, mechanism: 'window', ms_per_token: 0.01, keys_per_query: 700 },
      { kind: 'mechanism_train', T: 1024, mechanism: 'moba', skipped: 'budget.moba: …' },
      { kind: 'mechanism_train', T: 1024, mechanism: 'dsa', ms_per_token: 0.03, keys_per_query: 650 },
      decode(1024, 0.5, 0.4),
      { kind: 'mechanism_decode', T: 1024, mechanism: 'moba', attention_ms: 0.2, keys_per_query: 960 },
      { kind: 'mechanism_decode', T: 1024, mechanism: 'nonsense', attention_ms: 9, keys_per_query: 9 },
    ]);
    expect(s.train).toEqual([{ T: 1024, nsa: 100 / 1024, dense: 50 / 1024, window: 0.01, dsa: 0.03 }]);
    expect(s.trainKeys).toEqual([{ T: 1024, nsa: 10, dense: 1025 / 2, window: 700, dsa: 650 }]);
    expect(s.decode).toEqual([{ T: 1024, nsa: 0.5, dense: 0.4, moba: 0.2 }]);
    expect(s.decodeKeys).toEqual([{ T: 1024, nsa: 6, dense: 1024, moba: 960 }]);
    expect(() => benchSeries([train(1024, 1, 1), { kind: 'mechanism_train', T: 1024, mechanism: 'dsa' }])).toThrow(
      /field ms_per_token is not a finite number/,
    );
  });

  it('crossover: the first T from which NSA stays below dense; null when it is not below at the largest', () => {
    const p = (xs: Array<[number, number, number]>) => xs.map(([T, nsa, dense]) => ({ T, nsa, dense }));
    expect(
      crossover(
        p([
          [1, 2, 1],
          [2, 1, 2],
          [4, 1, 3],
        ]),
      ),
    ).toBe(2);
    expect(
      crossover(
        p([
          [1, 1, 2],
          [2, 3, 2],
          [4, 1, 3],
        ]),
      ),
    ).toBe(4); // below at 1, above at 2: from 4 on
    expect(
      crossover(
        p([
          [1, 1, 2],
          [2, 1, 3],
        ]),
      ),
    ).toBe(1);
    expect(
      crossover(
        p([
          [1, 1, 2],
          [2, 3, 2],
        ]),
      ),
    ).toBeNull();
    expect(crossover([])).toBeNull();
  });

  it('download: one JSON object per line, parseable back', () => {
    const lines = [train(1024, 1, 2), decode(1024, 1, 2)];
    const text = benchJsonl(lines);
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(lines);
    expect(benchJsonl([])).toBe('');
  });

  it('context lengths: k suffix, sorted and distinct, bounds named', () => {
    expect(parseContextLengths('4k, 1024 2048,1k', 64, 65536)).toEqual({ Ts: [1024, 2048, 4096] });
    expect(parseContextLengths('', 64, 100)).toEqual({ error: expect.stringMatching(/at least one/) });
    expect(parseContextLengths('32', 64, 100)).toEqual({ error: "'32' is not a context length from 64 to 100." });
    expect(parseContextLengths('1e3', 64, 100000)).toEqual({ error: expect.stringMatching(/'1e3'/) });
  });
});
