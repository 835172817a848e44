// DSA token top-k on the GPU on crafted scores (docs/dsa-spec.md section 3): heavy exact ties,
// −0 beside +0, negative scores, NaN (never picked: the row comes out short), T < k, k = 1,
// T = 129 (rows span three 64-token chunks); EXACTLY the expected rows, the same for 64 lanes and
// 1 lane, every group's row equal.
import { describe, expect, it } from 'vitest';

import type { DsaConfig } from '../../src/definitions/dsa-config';
import { createArena } from '../../src/gpu/arena';
import { dsaTopKDispatch } from '../../src/kernels/dsa-topk';
import { selectTokensRow } from '../../src/reference/dsa/topk';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

/** The spec's row with NaN tokens left out: the twin's rule on the non-NaN candidates. */
function expectedRow(row: Float32Array, t: number, k: number): number[] {
  const finite = Array.from(row.subarray(0, t + 1), (v) => (Number.isNaN(v) ? -Infinity : v));
  const out = new Int32Array(k);
  selectTokensRow(finite, 0, t, k, out, 0);
  const kept = Array.from(out).filter((s) => s >= 0 && !Number.isNaN(row[s]));
  return [...kept, ...new Array<number>(k - kept.length).fill(-1)];
}

const cfg = (topK: number): DsaConfig => ({ indexHeads: 1, indexDim: 2, topK, warmupSteps: 0, lossWeight: 1 });

function craftedScores(B: number, T: number, r: () => number): Float32Array {
  const out = new Float32Array(B * T * T);
  for (let i = 0; i < out.length; i++) {
    const u = r();
    const b = Math.floor(i / (T * T));
    if (b % 2 === 0)
      out[i] = u < 0.2 ? -0 : u < 0.4 ? 0 : Math.floor(r() * 4) - 1.5; // ties on 5 levels, ±0
    else out[i] = u < 0.05 ? NaN : u < 0.5 ? (u < 0.25 ? -0 : 0) : -Math.floor(r() * 3) - 0.25; // zeros on top, NaNs
  }
  return out;
}

describe('DSA top-k kernel on crafted scores (exact)', () => {
  it.each([
    { T: 129, k: 20, G: 2 },
    { T: 3, k: 5, G: 1 },
    { T: 67, k: 1, G: 3 },
    { T: 40, k: 40, G: 1 },
  ])('T=$T k=$k G=$G', async ({ T, k, G }) => {
    const gpu = await getGpu();
    const B = 2;
    const scores = craftedScores(B, T, rng(T + k));
    const arena = createArena(gpu, 'dsa-topk-test', [
      { name: 'scores', bytes: scores.length * 4 },
      { name: 'sel', bytes: B * T * G * k * 4 },
    ]);
    gpu.write(arena.get('scores'), scores);
    const shape = { B, T, H: G, G, dk: 2, dv: 2, cfg: cfg(k) };
    const rows: Record<number, Int32Array> = {};
    for (const lanes of [64, 1] as const) {
      gpu.write(arena.get('sel'), new Int32Array(B * T * G * k).fill(777));
      gpu.run([await dsaTopKDispatch(gpu, { ...shape, scores: arena.get('scores'), sel: arena.get('sel'), lanes })]);
      rows[lanes] = await gpu.readI32(arena.get('sel'), B * T * G * k);
    }
    expect(Array.from(rows[1]), '1 lane = 64 lanes').toEqual(Array.from(rows[64]));
    let short = 0;
    for (let row = 0; row < B * T; row++) {
      const want = expectedRow(scores.subarray(row * T, (row + 1) * T), row % T, k);
      if (want.includes(-1) && k <= (row % T) + 1) short++;
      for (let g = 0; g < G; g++) {
        expect(Array.from(rows[64].subarray((row * G + g) * k, (row * G + g + 1) * k)), `row ${row} group ${g}`).toEqual(want);
      }
    }
    if (T === 129) expect(short, 'rows cut short by NaN').toBeGreaterThan(0);
  });
});

describe('DSA kernel wrappers refuse bad arguments before any GPU work, naming the field', () => {
  it('indexDim > dk, topK = 0, a short slice', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'dsa-args', [
      { name: 'scores', bytes: 64 * 4 },
      { name: 'sel', bytes: 64 * 4 },
    ]);
    const base = { B: 1, T: 8, H: 2, G: 1, dk: 4, dv: 4, scores: arena.get('scores'), sel: arena.get('sel') };
    await expect(dsaTopKDispatch(gpu, { ...base, cfg: { ...cfg(4), indexDim: 8 } })).rejects.toMatchObject({ fields: ['dsa.indexDim'] });
    await expect(dsaTopKDispatch(gpu, { ...base, cfg: cfg(0) })).rejects.toMatchObject({ fields: ['dsa.topK'] });
    await expect(dsaTopKDispatch(gpu, { ...base, cfg: cfg(9) })).rejects.toMatchObject({ name: 'KernelArgumentError', argument: 'sel' });
  });
});
