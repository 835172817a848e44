// npm run bench:nsa -- --decode end to end (a child process on Dawn) at small T: the JSON lines it
// prints (adapter, decode_config, one 'decode' line per T, the summary) and their fields, and the
// key rows the decoder counted in its kernels at position T − 1 equal the formula
// ncmp(t) + |selected ≤ t| + min(w, t + 1) for NSA (here worked out by hand for the m7c-125m
// shape: l 32, d 16, l′ 64, n 16, w 512, block 0 and the 2 local blocks forced) and t + 1 dense.
// T = 200: every block selected, the window covers every key; T = 1100: 16 of 18 blocks, w < t + 1.
// (--mechanisms none: the other mechanisms' decode lines are checked in tests/cli/bench-attention-gpu.test.ts.)
import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

describe('npm run bench:nsa -- --decode (spawned)', () => {
  it('prints the decode lines and summary; counted reads = the formula', { timeout: 300_000 }, () => {
    const r = spawnSync(
      process.execPath,
      [
        'scripts/run-node.mjs',
        'src/cli/bench-nsa.ts',
        '--decode',
        '--T',
        '200,1100',
        '--repeats',
        '1',
        '--warmup',
        '0',
        '--mechanisms',
        'none',
      ],
      { encoding: 'utf8', env: { ...process.env, NSA_GPU: 'software' } },
    );
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.kind)).toEqual(['adapter', 'decode_config', 'decode', 'decode', 'summary']);
    expect(lines[1]).toMatchObject({
      kind: 'decode_config',
      B: 1,
      H: 12,
      G: 2,
      dk: 64,
      dv: 64,
      layers: 1,
      vocab: 256,
      repeats: 1,
      warmup: 0,
    });
    expect(lines[1].nsa).toEqual({ l: 32, d: 16, lSel: 64, nSel: 16, w: 512, phi: 'avg', forceInit: true, forceLocal: 2 });

    const want: Record<number, { cmp: number; sel: number; win: number }> = {
      // t = 199: ncmp = ⌊(200 − 32) / 16⌋ + 1 = 11; blocks 0…3 all selected: 3·64 + 8 = 200; window 200.
      200: { cmp: 11, sel: 200, win: 200 },
      // t = 1099: ncmp = ⌊1068 / 16⌋ + 1 = 67; 16 of the 18 blocks, the last (17) holding 1100 − 1088 = 12 keys
      // (forced local, as are 0 and 16): 15·64 + 12 = 972; window w = 512.
      1100: { cmp: 67, sel: 972, win: 512 },
    };
    for (const [i, T] of [200, 1100].entries()) {
      const d = lines[2 + i];
      expect(d).toMatchObject({ kind: 'decode', T, position: T - 1, reads_match_formula: true, outputs_finite: true });
      expect(['timestamp', 'wall']).toContain(d.timing);
      for (const k of [
        'nsa_ms',
        'dense_ms',
        'nsa_over_dense_time',
        'nsa_attention_ms',
        'dense_attention_ms',
        'nsa_over_dense_attention_time',
      ])
        expect(d[k], k).toBeGreaterThan(0);
      const w = want[T];
      expect(d.nsa_keys_per_query).toEqual({ ...w, total: w.cmp + w.sel + w.win });
      expect(d.nsa_keys_formula).toEqual(d.nsa_keys_per_query);
      expect(d.dense_keys_per_query).toBe(T);
      expect(d.dense_keys_formula).toBe(T);
      expect(d.nsa_over_dense_keys).toBeCloseTo((w.cmp + w.sel + w.win) / T, 12);
      const groups = (x: unknown) => (x as Array<{ kernel: string; ms: number; calls: number }>).map((k) => k.kernel).sort();
      expect(groups(d.nsa_kernels)).toEqual(
        [
          'append kv',
          'attend cmp',
          'attend sel',
          'attend win',
          'compress',
          'embedding',
          'ffn',
          'gates',
          'lm head',
          'o',
          'q k v',
          'rmsnorm',
          'select',
        ].sort(),
      );
      expect(groups(d.dense_kernels)).toEqual(['append kv', 'attend dense', 'embedding', 'ffn', 'lm head', 'o', 'q k v', 'rmsnorm'].sort());
    }
    const s = lines[4];
    expect(s.train_crossover).toBeNull();
    expect(s.decode_growth).toMatchObject({ from_T: 200, to_T: 1100, nsa_flat_target: 1.3 });
    expect(s.decode_attention_growth).toMatchObject({ from_T: 200, to_T: 1100 });
    for (const k of ['decode_crossover', 'decode_attention_crossover'])
      expect(Object.keys(s[k] as object).sort()).toEqual(['T', 'interpolated', 'note']);
  });
});
