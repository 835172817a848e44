// npm run bench:nsa's flags, size refusals and summary, without the GPU (src/cli/bench-nsa-options.ts):
// --decode / --train / --layers, --T checked as integers and (decode) against the longest context,
// every T against the adapter's buffer and binding limits naming the largest --T that fits, and
// the crossover and growth figures of the closing line. The CLI itself, spawned, is
// tests/cli/bench-nsa.integration.test.ts.
import { describe, expect, it } from 'vitest';

import {
  benchSummary,
  crossover,
  DECODE_MAX_T,
  decodeEntries,
  decodeGrowth,
  resolveBenchNsa,
  trainEntries,
} from '../../src/bench/bench-sizes';
import { assertBenchSizes, benchNsaOptions } from '../../src/cli/bench-nsa-options';
import { usageError } from '../helpers/usage-error';

const GiB = 2 ** 30;
const limits = (perBuffer: number) => ({ maxBufferSize: perBuffer, maxStorageBufferBindingSize: perBuffer, source: 'this adapter (test)' });

describe('bench:nsa flags', () => {
  it('training by default; --decode alone decodes; --decode --train both; defaults by adapter', () => {
    expect(benchNsaOptions([])).toMatchObject({ Ts: undefined, train: true, decode: false, layers: 1 });
    expect(benchNsaOptions(['--decode'])).toMatchObject({ train: false, decode: true });
    expect(benchNsaOptions(['--decode', '--train', '--layers', '2', '--T', '1024,4096,'])).toMatchObject({
      Ts: [1024, 4096],
      train: true,
      decode: true,
      layers: 2,
    });
    expect(resolveBenchNsa(benchNsaOptions(['--decode']), true)).toMatchObject({ Ts: [1024], decodeRepeats: 5, decodeWarmup: 1 });
    // bench:attention times the other mechanisms with training, all three unless --mechanisms says.
    expect(benchNsaOptions([]).mechanisms).toEqual(['window', 'moba', 'dsa']);
    expect(benchNsaOptions(['--mechanisms', 'dsa,window,dsa']).mechanisms).toEqual(['dsa', 'window']);
    expect(benchNsaOptions(['--mechanisms', 'none']).mechanisms).toEqual([]);
    expect(resolveBenchNsa(benchNsaOptions(['--decode', '--mechanisms', 'moba']), true).mechanisms).toEqual(['moba']);
    expect(resolveBenchNsa({ ...benchNsaOptions([]), mechanisms: undefined }, true).mechanisms).toEqual([]);
    expect(resolveBenchNsa(benchNsaOptions([]), false)).toMatchObject({
      Ts: [1024, 2048, 4096, 8192, 16384],
      trainRepeats: 5,
      trainWarmup: 2,
    });
    expect(resolveBenchNsa(benchNsaOptions(['--repeats', '3', '--warmup', '0']), true)).toMatchObject({
      trainRepeats: 3,
      trainWarmup: 0,
      decodeRepeats: 3,
      decodeWarmup: 0,
    });
  });

  it('refusals name the flag', () => {
    const cases: Array<[string[], string, RegExp]> = [
      [['--T', '1024,abc'], 'T', /^--T: 'abc' is not a positive integer/],
      [['--T', '0'], 'T', /^--T: '0' is not a positive integer/],
      [['--T', '1e3'], 'T', /not a positive integer/],
      [['--T', ','], 'T', /^--T: no lengths in ','/],
      [['--decode', '--T', String(DECODE_MAX_T + 1)], 'T', /^--T: 65537 is longer than a model's longest context, 65536 .*--T ≤ 65536/],
      [['--train'], 'train', /^--train goes with --decode/],
      [['--layers', '2'], 'layers', /^--layers goes with --decode/],
      [['--decode', '--layers', '13'], 'layers', /^--layers must be in \[1, 12\]/],
      [['--repeats', '0'], 'repeats', /^--repeats must be ≥ 1/],
      [['--warmup', '-1'], 'warmup', /^--warmup must be ≥ 0/],
      [['--decode', '--trian'], 'trian', /^unknown flag --trian \(did you mean --train\?\)/],
      [['--mechanisms', 'window,mboa'], 'mechanisms', /^--mechanisms: 'mboa' is not one of window, moba, dsa \(or none\)/],
      [['--mechanisms', ''], 'mechanisms', /^--mechanisms is empty/],
      [['--mechanisms', 'window,,moba'], 'mechanisms', /^--mechanisms: '' is not one of/],
    ];
    for (const [argv, flag, message] of cases) {
      const e = usageError(() => benchNsaOptions(argv));
      expect(e.flag, argv.join(' ')).toBe(flag);
      expect(e.message, argv.join(' ')).toMatch(message);
    }
  });
});

describe('bench:nsa sizes against the adapter, before allocating', () => {
  it('the largest tensor of each mode grows with T (training: the selection scores; decode: a K/V cache)', () => {
    const largest = (e: Array<{ name: string; bytes: number }>) => e.reduce((a, x) => (x.bytes > a.bytes ? x : a));
    expect(largest(trainEntries(65536))).toEqual({ name: 's.scores', bytes: 512 * 2 ** 20 });
    // The caches of 65,536 positions × 2 groups × 64 floats.
    expect(largest(decodeEntries('nsa', 65536, 1))).toEqual({ name: 'L0.K0', bytes: 65536 * 2 * 64 * 4 });
  });

  it('a T past the per-buffer limit is refused with the largest --T that fits; what fits passes', () => {
    const train = resolveBenchNsa(benchNsaOptions(['--T', '1024,65536']), false);
    const e = usageError(() => assertBenchSizes(train, limits(128 * 2 ** 20)));
    expect(e.flag).toBe('T');
    expect(e.message).toBe(
      '--T: 65536 needs a 512.0 MiB tensor (training: s.scores); this adapter (test) allows 128.0 MiB per buffer and binding (--T ≤ 32768 fits)',
    );
    expect(() => assertBenchSizes(train, limits(GiB))).not.toThrow();
    const decode = resolveBenchNsa(benchNsaOptions(['--decode', '--T', '4096,65536']), false);
    expect(() => assertBenchSizes(decode, limits(GiB))).not.toThrow();
    // 8 MiB: the FFN's 6 MiB weights fit; a K/V cache of T × 2 × 64 floats up to T = 16384.
    expect(usageError(() => assertBenchSizes(decode, limits(8 * 2 ** 20))).message).toBe(
      '--T: 65536 needs a 32.0 MiB tensor (decode: L0.K0); this adapter (test) allows 8.0 MiB per buffer and binding (--T ≤ 16384 fits)',
    );
    // The GPU memory budget too.
    const t4k = resolveBenchNsa(benchNsaOptions(['--T', '4096']), false);
    expect(usageError(() => assertBenchSizes(t4k, { ...limits(GiB), gpuMemoryBytes: 64 * 2 ** 20 })).message).toMatch(
      /^--T: 4096 needs [\d.]+ MiB of GPU memory \(training\); the budget is 64\.0 MiB \(--T ≤ \d+ fits\)$/,
    );
  });
});

describe('bench:nsa summary', () => {
  it('crossover: the T from which NSA stays faster, interpolated in log T', () => {
    const c = crossover([
      { T: 4096, nsa: 2, dense: 1 },
      { T: 1024, nsa: 4, dense: 1 },
      { T: 16384, nsa: 1, dense: 2 },
    ]);
    // log ratio ln 2 at 4096 and −ln 2 at 16384: halfway in log T, 8192.
    expect(c).toEqual({ T: 16384, interpolated: 8192, note: 'NSA is slower at 4096 and faster from 16384 on' });
    expect(crossover([{ T: 1024, nsa: 1, dense: 2 }]).T).toBe(1024);
    expect(crossover([{ T: 1024, nsa: 1, dense: 2 }]).note).toMatch(/faster at every T measured/);
    // Faster at 2048 but slower again at 4096: no crossover yet.
    const none = crossover([
      { T: 2048, nsa: 1, dense: 2 },
      { T: 4096, nsa: 3, dense: 2 },
    ]);
    expect(none).toMatchObject({ T: null, interpolated: null });
    expect(none.note).toMatch(/not faster at the largest T measured \(4096\)/);
  });

  it('growth: the largest T over 4096 when measured below it, else over the smallest; the 1.3× target', () => {
    const rows = [1024, 4096, 16384].map((T, i) => ({ T, nsa: [1, 1, 1.2][i], dense: [1, 4, 16][i] }));
    expect(decodeGrowth(rows)).toEqual({ from_T: 4096, to_T: 16384, nsa: 1.2, dense: 4, nsa_flat_target: 1.3, nsa_flat: true });
    expect(decodeGrowth(rows.slice(0, 2))).toMatchObject({ from_T: 1024, to_T: 4096, nsa: 1, dense: 4 });
    expect(decodeGrowth([])).toBeNull();
    const s = benchSummary([], rows, rows);
    expect(s).toMatchObject({ kind: 'summary', train_crossover: null, decode_growth: { nsa: 1.2 }, decode_attention_growth: { dense: 4 } });
    expect(benchSummary(rows, [])).toMatchObject({ decode_crossover: null, decode_growth: null, train_crossover: { T: 4096 } });
  });
});
