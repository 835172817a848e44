// npm run bench:attention's mechanism lines (src/bench/mechanism-bench.ts) on the test adapter, at
// T = 130 with the m7c-125m layer shape: each mechanism's budget is NSA's capped at T − 1 = 129
// (window w = 129, MoBA 2 blocks of 64, DSA top-129), the outputs are finite and the keys counted
// from the GPU's selection are what the configs read, counted here position by position: the
// window Σ min(w, t + 1); DSA every earlier token up to its k, Σ min(k, t + 1); MoBA its own block
// and, once one is complete, one earlier block (2 selected, never more than Σ min(2·64, t + 1)).
// Decoding at position 129 on the GPU decoder: the key rows its kernels counted equal the formula
// (DSA: min(k, 130) = 129 main rows per group and 130 indexer rows).
// Below one MoBA block the line says why instead of a time.
import { describe, expect, it } from 'vitest';

import { mechanismDecodeRow } from '../../src/bench/decode-bench';
import { mechanismTrainRow } from '../../src/bench/mechanism-bench';
import { getGpu } from '../helpers/gpu';

const T = 130;
const once = { repeats: 1, warmup: 0 };
const denseKeys = (T * (T + 1)) / 2;
const sum = (f: (t: number) => number) => Array.from({ length: T }, (_, t) => f(t)).reduce((a, b) => a + b, 0);

describe('bench:attention mechanism lines', () => {
  it('window, MoBA and DSA at NSA budget: configs, finite outputs, counted keys (T = 130)', async () => {
    const gpu = await getGpu();
    const dense = { ms: 1, keys: denseKeys };
    const [win, moba, dsa] = [
      await mechanismTrainRow(gpu, 'window', T, once, dense),
      await mechanismTrainRow(gpu, 'moba', T, once, dense),
      await mechanismTrainRow(gpu, 'dsa', T, once, dense),
    ];
    for (const r of [win, moba, dsa])
      expect(r).toMatchObject({ kind: 'mechanism_train', T, budget: 129, budget_capped: true, outputs_finite: true });
    expect(win.config).toEqual({ w: 129 });
    expect(moba.config).toEqual({ blockSize: 64, topK: 2 });
    expect(dsa.config).toMatchObject({ topK: 129 });
    expect(win.keys_per_head).toBe(sum((t) => Math.min(129, t + 1)));
    expect(dsa.keys_per_head).toBe(sum((t) => Math.min(129, t + 1)));
    expect(dsa.index_keys_per_query).toBe((T + 1) / 2);
    // MoBA: blocks 0 and 1 complete at t = 63 and 127; a query holds its own block and the one complete block before it (only block 0 for t < 64).
    expect(moba.keys_per_head).toBe(sum((t) => (t < 64 ? t + 1 : t < 128 ? t + 1 : 64 + (t - 127))));
    expect(moba.over_dense_keys).toBeCloseTo((moba.keys_per_head as number) / denseKeys, 12);
    expect(gpu.reports).toEqual([]);
  });

  it('decoding at T − 1 = 129: the window, MoBA and DSA read what their kernels counted and the formula says', async () => {
    const gpu = await getGpu();
    const o = { layers: 1, repeats: 1, warmup: 0 };
    const dense = { ms: 1, attentionMs: 1 };
    const win = await mechanismDecodeRow(gpu, 'window', T, o, dense);
    const moba = await mechanismDecodeRow(gpu, 'moba', T, o, dense);
    const dsa = await mechanismDecodeRow(gpu, 'dsa', T, o, dense);
    expect(dsa).toMatchObject({
      config: { topK: 129, indexHeads: 4, indexDim: 32 },
      keys_per_query: 129,
      keys_formula: 129,
      index_keys_per_query: 130,
      index_keys_formula: 130,
      reads_match_formula: true,
      outputs_finite: true,
    });
    expect((dsa.kernels as Array<{ kernel: string }>).map((k) => k.kernel)).toEqual(expect.arrayContaining(['select', 'attend sel']));
    expect(win).toMatchObject({
      config: { w: 129 },
      keys_per_query: 129,
      keys_formula: 129,
      reads_match_formula: true,
      outputs_finite: true,
    });
    // MoBA at t = 129: its own block 2 (positions 128, 129) and one of the two complete blocks.
    expect(moba).toMatchObject({
      config: { blockSize: 64, topK: 2 },
      keys_per_query: 66,
      keys_formula: 66,
      reads_match_formula: true,
      outputs_finite: true,
    });
    expect(gpu.reports).toEqual([]);
  });

  it('a budget below one MoBA block: the line says why, nothing is timed', async () => {
    const gpu = await getGpu();
    const r = await mechanismTrainRow(gpu, 'moba', 60, once, { ms: 1, keys: 1830 });
    expect(r.skipped).toMatch(/^budget.moba: 59 key rows are fewer than one MoBA block of 64/);
    expect(r.fwd_ms).toBeUndefined();
  });
});
