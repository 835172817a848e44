// The GPU decode's split matrix-vector product (shaders/decode_matvec.wgsl: matvecPart,
// matvecCombine, through matvecDispatch) against its float64 twin (src/reference/decode-matvec.ts)
// on random shapes: K not a multiple of the chunks, exact chunk boundaries, more chunks than inputs
// (empty chunks), one chunk (decode_rows.wgsl's matvec), N not a multiple of the 64-lane tiles,
// several rows, W stored [N, K], and the residual add. Partials and outputs rel RMS ≤ 1e-5 (f32
// against f64); two runs equal bit for bit.
import { describe, expect, it } from 'vitest';

import { createLayoutArena } from '../../src/gpu/arena';
import { matvecDispatch, matvecPartialsLength, matvecSplits } from '../../src/kernels/decode';
import { matvecCombine, matvecPartials } from '../../src/reference/decode-matvec';
import { randn, relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const TOL = 1e-5;

interface Case {
  name: string;
  rows: number;
  K: number;
  N: number;
  splits: number;
  transW?: boolean;
  accumulate?: boolean;
}

const CASES: Case[] = [
  { name: 'K 100 in 7 chunks (not a multiple), N 70', rows: 1, K: 100, N: 70, splits: 7 },
  { name: 'K 64 in 4 chunks (exact), N 130, 2 rows, residual add', rows: 2, K: 64, N: 130, splits: 4, accumulate: true },
  { name: 'W stored [N, K], 3 rows, 3 chunks', rows: 3, K: 48, N: 20, splits: 3, transW: true },
  { name: 'K 5 in 8 chunks (3 empty)', rows: 1, K: 5, N: 8, splits: 8 },
  { name: 'one chunk (decode_rows matvec), residual add', rows: 2, K: 33, N: 17, splits: 1, accumulate: true },
];

describe('GPU decode split matvec = float64 twin (partials and outputs rel RMS ≤ 1e-5, deterministic)', () => {
  CASES.forEach((c, i) => {
    it(c.name, async () => {
      const gpu = await getGpu();
      const r = rng(300 + i);
      const { rows, K, N, splits } = c;
      const x = Float32Array.from(randn(rows * K, r));
      const W = Float32Array.from(randn(K * N, r));
      const prior = Float32Array.from(randn(rows * N, r));
      const partLen = Math.max(1, matvecPartialsLength(rows, N, splits));
      const { arena, tensors: t } = createLayoutArena(gpu, 'matvec-split', (place) => ({
        st: place('st', 4),
        x: place('x', x.length),
        W: place('W', W.length),
        out: place('out', rows * N),
        part: place('part', partLen),
      }));
      gpu.write(t.x, x);
      gpu.write(t.W, W);
      const list = await matvecDispatch(gpu, {
        st: t.st,
        x: t.x,
        W: t.W,
        out: t.out,
        rows,
        K,
        N,
        transW: c.transW,
        accumulate: c.accumulate,
        splits,
        part: t.part,
        label: c.name,
      });
      expect(list.length).toBe(splits > 1 ? 2 : 1);
      const run = async () => {
        gpu.write(t.out, prior);
        gpu.run(list);
        return { out: await gpu.readF32(t.out), part: await gpu.readF32(t.part, partLen) };
      };
      const first = await run();
      const second = await run();
      const part = matvecPartials(x, W, rows, K, N, splits, c.transW);
      const want = matvecCombine(part, rows * N, splits, c.accumulate ? prior : undefined);
      if (splits > 1) {
        expect(relRms(first.part, part), 'partials').toBeLessThanOrEqual(TOL);
        const empty = Array.from({ length: splits }, (_, s) => s).filter((s) => Math.min(K, s * Math.ceil(K / splits)) >= K);
        for (const s of empty) expect(Array.from(first.part.subarray(s * rows * N, (s + 1) * rows * N)).every((v) => v === 0)).toBe(true);
      }
      expect(relRms(first.out, want), 'output').toBeLessThanOrEqual(TOL);
      expect(second.out).toEqual(first.out);
      for (const b of arena.buffers) b.destroy();
    });
  });

  it('matvecSplits: chunks of ≥ 4 inputs, at most 64, ≥ 1,024 workgroups where those allow, 1 when the outputs fill it', () => {
    expect(matvecSplits(2048, 768)).toBe(64); // 12 tiles × 64 = 768
    expect(matvecSplits(768, 2048)).toBe(32); // 32 tiles × 32 = 1,024
    expect(matvecSplits(768, 128)).toBe(64); // 2 tiles × 64 = 128
    expect(matvecSplits(40, 128)).toBe(10); // K / 4
    expect(matvecSplits(768, 50257)).toBe(2);
    expect(matvecSplits(768, 65536 * 2)).toBe(1);
    expect(matvecSplits(10, 4)).toBe(2);
    expect(matvecSplits(3, 4)).toBe(1);
  });
});
