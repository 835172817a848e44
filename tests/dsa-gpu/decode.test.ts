// The DSA decode kernels (shaders/decode_dsa.wgsl) against the float64 twin at one query, on random
// shapes with the edge cases: t = 0, t = cap − 1, k ≥ t + 1 (−1 padding), k = 1, cap > 64 (the
// scores kernel's chunks and the top-k's 64-token passes wrap), heavy exact ties (repeated indexer
// keys; every qI·kI ≤ 0 gives scores of exactly 0, negative head weights give −0), two layers'
// selection slots (only the layer's rows are written), 64 lanes and 1 lane.
// - appendIndexKey: row t of the cache is the new key, bit for bit; the other rows are untouched.
// - indexScoresAt: the scores of tokens 0 … t vs indexScore (src/reference/dsa/indexer.ts), rel RMS
//   ≤ 1e-5 per row (f32 vs f64); the rows past t are not written.
// - topKAt: the selection equals the twin's selectTokensRow (ties to the lower token) run on the
//   kernel's own scores, exactly, and on the float64 scores where no two candidates are near-tied;
//   every group's row equal; the indexer rows read that the kernels counted = t + 1
//   (docs/dsa-spec.md section 7).
// - Against the training kernels (dsa_index_scores.wgsl, dsa_topk.wgsl) on the same qI, wI and keys:
//   the scores equal bit for bit (the same fma order) and the selections are equal.
import { describe, expect, it } from 'vitest';

import { type DsaConfig, indexScale } from '../../src/definitions/dsa-config';
import { createArena } from '../../src/gpu/arena';
import { decodeDsaDispatches, decodeIndexChunks, decodeParams } from '../../src/kernels/decode';
import { dsaIndexScoresDispatch } from '../../src/kernels/dsa-index-scores';
import { dsaTopKDispatch } from '../../src/kernels/dsa-topk';
import { indexScore } from '../../src/reference/dsa/indexer';
import { selectTokensRow } from '../../src/reference/dsa/topk';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

interface Case {
  B: number;
  G: number;
  cap: number;
  t: number;
  HI: number;
  dI: number;
  k: number;
  /** 'random': Gaussian inputs; 'ties': repeated keys and sign-crafted queries (exact ties, 0, −0). */
  kind: 'random' | 'ties';
}

const CASES: Case[] = [
  { B: 2, G: 2, cap: 23, t: 17, HI: 3, dI: 4, k: 5, kind: 'random' },
  { B: 1, G: 1, cap: 9, t: 0, HI: 1, dI: 2, k: 3, kind: 'random' },
  { B: 3, G: 3, cap: 12, t: 11, HI: 2, dI: 6, k: 16, kind: 'random' },
  { B: 2, G: 1, cap: 150, t: 149, HI: 4, dI: 8, k: 70, kind: 'random' },
  { B: 2, G: 2, cap: 130, t: 100, HI: 2, dI: 4, k: 1, kind: 'random' },
  { B: 2, G: 2, cap: 70, t: 69, HI: 2, dI: 4, k: 9, kind: 'ties' },
  { B: 1, G: 2, cap: 31, t: 20, HI: 1, dI: 2, k: 21, kind: 'ties' },
];

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** f32-representable inputs: qI [B,H_I,d_I], wI [B,H_I], the cache kI [B,cap,d_I] with row t the new key. */
function inputs(c: Case, seed: number) {
  const r = rng(seed);
  const f = (n: number, gen: () => number) => Float32Array.from({ length: n }, gen);
  if (c.kind === 'random') {
    return {
      qI: f(c.B * c.HI * c.dI, () => gauss(r)),
      wI: f(c.B * c.HI, () => gauss(r)),
      kI: f(c.B * c.cap * c.dI, () => gauss(r)),
    };
  }
  // Keys from a palette of 3 (exact ties), a third of them the negated first query head (a ≤ 0 for
  // every head when the heads share a sign pattern: scores exactly 0); the weights' signs mixed (−0).
  const qI = f(c.B * c.HI * c.dI, () => 0);
  for (let b = 0; b < c.B; b++) {
    const base = Array.from({ length: c.dI }, () => Math.abs(gauss(r)) + 0.1);
    for (let j = 0; j < c.HI; j++) for (let e = 0; e < c.dI; e++) qI[(b * c.HI + j) * c.dI + e] = base[e] * (1 + j);
  }
  const palette = [1, 2, 3].map(() => Array.from({ length: c.dI }, () => Math.round(gauss(r) * 4) / 4));
  const kI = f(c.B * c.cap * c.dI, () => 0);
  for (let b = 0; b < c.B; b++) {
    for (let s = 0; s < c.cap; s++) {
      const u = r();
      const row = u < 0.33 ? Array.from({ length: c.dI }, (_, e) => -qI[b * c.HI * c.dI + e]) : palette[u < 0.66 ? 0 : 1];
      kI.set(row, (b * c.cap + s) * c.dI);
    }
  }
  return { qI, wI: f(c.B * c.HI, () => (r() < 0.5 ? -1 : 1) * (0.5 + Math.floor(r() * 3))), kI };
}

describe('DSA decode kernels vs the float64 twin at one query (scores rel ≤ 1e-5; top-k, reads and the key append exact)', () => {
  it.each(CASES.flatMap((c) => [64, 1].map((lanes) => ({ ...c, lanes: lanes as 64 | 1 }))))(
    'B=$B G=$G cap=$cap t=$t H_I=$HI d_I=$dI k=$k $kind, $lanes lanes',
    async (c) => {
      const gpu = await getGpu();
      const { B, G, cap, t, HI, dI, k, lanes } = c;
      const cfg: DsaConfig = { indexHeads: HI, indexDim: dI, topK: k, warmupSteps: 0, lossWeight: 1 };
      const x = inputs(c, 7 * cap + t + k);
      // The new key is row t of x.kI; the cache holds every other row already (and garbage past t).
      const kNew = new Float32Array(B * dI);
      const cacheBefore = x.kI.slice();
      for (let b = 0; b < B; b++) {
        kNew.set(x.kI.subarray((b * cap + t) * dI, (b * cap + t + 1) * dI), b * dI);
        cacheBefore.fill(99, (b * cap + t) * dI, (b * cap + t + 1) * dI);
      }
      const layers = 2;
      const layer = 1;
      const chunks = decodeIndexChunks(cap, lanes);
      const f = (name: string, n: number) => ({ name, bytes: Math.max(1, n) * 4 });
      const arena = createArena(gpu, 'dsa-decode-test', [
        f('st', 4),
        f('qI', B * HI * dI),
        f('wI', B * HI),
        f('kNew', B * dI),
        f('kI', B * cap * dI),
        f('scores', B * cap),
        f('cnt', B * chunks),
        f('sel', layers * B * G * k),
        f('ireads', layers * B),
      ]);
      const a = (n: string) => arena.get(n);
      gpu.write(a('st'), Uint32Array.from([t, 0, 0, 0]));
      gpu.write(a('qI'), x.qI);
      gpu.write(a('wI'), x.wI);
      gpu.write(a('kNew'), kNew);
      gpu.write(a('kI'), cacheBefore);
      gpu.write(a('scores'), new Float32Array(B * cap).fill(-7));
      gpu.write(a('sel'), new Int32Array(layers * B * G * k).fill(-5));
      gpu.write(a('ireads'), new Uint32Array(layers * B).fill(12345));
      const P = decodeParams({}, { B, G, cap, HI, dI, topK: k, iscale: indexScale(cfg), slot: layer * B * G * k, rslot: layer * B });
      const storage = {
        st: a('st'),
        qI: a('qI'),
        wI: a('wI'),
        kNew: a('kNew'),
        kI: a('kI'),
        scores: a('scores'),
        cnt: a('cnt'),
        sel: a('sel'),
        ireads: a('ireads'),
      };
      gpu.run(await decodeDsaDispatches(gpu, P, storage, 'dsa decode test', lanes));
      const [kI, scores, sel, ireads] = await Promise.all([
        gpu.readF32(a('kI')),
        gpu.readF32(a('scores')),
        gpu.readI32(a('sel')),
        gpu.readI32(a('ireads')),
      ]);
      for (const buf of arena.buffers) buf.destroy();

      expect(Array.from(kI), 'the cache after the append').toEqual(Array.from(x.kI));
      const c64 = indexScale(cfg);
      const q64 = Float64Array.from(x.qI);
      const w64 = Float64Array.from(x.wI);
      const k64 = Float64Array.from(x.kI);
      let zeros = 0;
      let ties = 0;
      for (let b = 0; b < B; b++) {
        const want = Float64Array.from({ length: t + 1 }, (_, s) =>
          indexScore(q64, b * HI * dI, w64, b * HI, k64, (b * cap + s) * dI, HI, dI, c64),
        );
        const got = scores.subarray(b * cap, b * cap + t + 1);
        expect(relRms(got, want), `scores b=${b}`).toBeLessThanOrEqual(1e-5);
        expect(
          Array.from(scores.subarray(b * cap + t + 1, (b + 1) * cap)).every((v) => v === -7),
          `scores past t, b=${b}`,
        ).toBe(true);
        zeros += want.filter((v) => v === 0).length;
        ties += want.length - new Set(want).size;
        // The twin's rule on the kernel's own scores: exactly the kernel's row.
        const own = new Int32Array(k);
        selectTokensRow(Float64Array.from(got), 0, t, k, own, 0);
        // On the float64 scores too, when no two candidates differ by less than f32 rounding.
        const sorted = Array.from(want).sort((p, q) => p - q);
        const nearTie = sorted.some((v, i) => i > 0 && v !== sorted[i - 1] && v - sorted[i - 1] < 1e-5 * Math.max(1, Math.abs(v)));
        const twin = new Int32Array(k);
        selectTokensRow(want, 0, t, k, twin, 0);
        for (let g = 0; g < G; g++) {
          const o = ((layer * B + b) * G + g) * k;
          const row = Array.from(sel.subarray(o, o + k));
          expect(row, `selection b=${b} g=${g}`).toEqual(Array.from(own));
          if (!nearTie) expect(row, `selection b=${b} g=${g} vs the float64 scores`).toEqual(Array.from(twin));
          expect(row.filter((s) => s >= 0)).toHaveLength(Math.min(k, t + 1));
        }
        expect(ireads[layer * B + b], `indexer rows read b=${b}`).toBe(t + 1);
        expect(ireads[b], 'the other layer’s count is untouched').toBe(12345);
      }
      expect(
        Array.from(sel.subarray(0, B * G * k)).every((s) => s === -5),
        'the other layer’s rows are untouched',
      ).toBe(true);
      if (c.kind === 'ties') {
        expect(zeros, 'scores exactly 0').toBeGreaterThan(0);
        expect(ties, 'exact ties').toBeGreaterThan(2);
      }
      expect(gpu.reports).toEqual([]);
    },
  );

  it.each([
    { B: 2, G: 2, t: 40, HI: 3, dI: 4, k: 7, kind: 'random' as const },
    { B: 1, G: 1, t: 129, HI: 2, dI: 6, k: 33, kind: 'random' as const },
    { B: 2, G: 2, t: 69, HI: 2, dI: 4, k: 9, kind: 'ties' as const },
  ])('B=$B t=$t H_I=$HI d_I=$dI k=$k $kind: scores = the training kernel’s bit for bit, selections equal', async (c) => {
    const gpu = await getGpu();
    const { B, G, t, HI, dI, k } = c;
    const T = t + 1;
    const cap = T;
    const cfg: DsaConfig = { indexHeads: HI, indexDim: dI, topK: k, warmupSteps: 0, lossWeight: 1 };
    const x = inputs({ ...c, cap }, 3 * t + k);
    const kNew = new Float32Array(B * dI);
    for (let b = 0; b < B; b++) kNew.set(x.kI.subarray((b * cap + t) * dI, (b * cap + t + 1) * dI), b * dI);
    // The training layout [B, T, ·]: query row t holds the decoder's qI and wI (the other rows are zeros, not read for row t).
    const qIT = new Float32Array(B * T * HI * dI);
    const wIT = new Float32Array(B * T * HI);
    for (let b = 0; b < B; b++) {
      qIT.set(x.qI.subarray(b * HI * dI, (b + 1) * HI * dI), (b * T + t) * HI * dI);
      wIT.set(x.wI.subarray(b * HI, (b + 1) * HI), (b * T + t) * HI);
    }
    const lanes = 64;
    const f = (name: string, n: number) => ({ name, bytes: Math.max(1, n) * 4 });
    const arena = createArena(gpu, 'dsa-decode-vs-train', [
      f('st', 4),
      f('qI', B * HI * dI),
      f('wI', B * HI),
      f('kNew', B * dI),
      f('kI', B * cap * dI),
      f('scores', B * cap),
      f('cnt', B * decodeIndexChunks(cap, lanes)),
      f('sel', B * G * k),
      f('ireads', B),
      f('qIT', B * T * HI * dI),
      f('wIT', B * T * HI),
      f('scoresT', B * T * T),
      f('selT', B * T * G * k),
    ]);
    const a = (n: string) => arena.get(n);
    gpu.write(a('st'), Uint32Array.from([t, 0, 0, 0]));
    gpu.write(a('qI'), x.qI);
    gpu.write(a('wI'), x.wI);
    gpu.write(a('kNew'), kNew);
    gpu.write(a('kI'), x.kI);
    gpu.write(a('qIT'), qIT);
    gpu.write(a('wIT'), wIT);
    const P = decodeParams({}, { B, G, cap, HI, dI, topK: k, iscale: indexScale(cfg) });
    const storage = {
      st: a('st'),
      qI: a('qI'),
      wI: a('wI'),
      kNew: a('kNew'),
      kI: a('kI'),
      scores: a('scores'),
      cnt: a('cnt'),
      sel: a('sel'),
      ireads: a('ireads'),
    };
    const shape = { B, T, H: G, G, dk: dI, dv: 1, cfg };
    gpu.run([
      ...(await decodeDsaDispatches(gpu, P, storage, 'dsa decode vs train', lanes)),
      await dsaIndexScoresDispatch(gpu, { ...shape, qI: a('qIT'), kI: a('kI'), wI: a('wIT'), scores: a('scoresT') }),
      await dsaTopKDispatch(gpu, { ...shape, scores: a('scoresT'), sel: a('selT') }),
    ]);
    const [scores, sel, scoresT, selT] = await Promise.all([
      gpu.readF32(a('scores')),
      gpu.readI32(a('sel')),
      gpu.readF32(a('scoresT')),
      gpu.readI32(a('selT')),
    ]);
    for (const buf of arena.buffers) buf.destroy();
    const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));
    for (let b = 0; b < B; b++) {
      const row = (b * T + t) * T;
      expect(bits(scores.subarray(b * cap, b * cap + T)), `scores b=${b}`).toEqual(bits(scoresT.subarray(row, row + T)));
      const o = (b * T + t) * G * k;
      expect(Array.from(sel.subarray(b * G * k, (b + 1) * G * k)), `selection b=${b}`).toEqual(Array.from(selT.subarray(o, o + G * k)));
    }
    expect(gpu.reports).toEqual([]);
  });

  it('refuses a slice too small for its tensor, naming it, before any GPU work', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'dsa-decode-bad', [{ name: 'x', bytes: 256 }]);
    const s = arena.get('x');
    const P = decodeParams({}, { B: 1, G: 1, cap: 100, HI: 1, dI: 2, topK: 3, iscale: 1 });
    const storage = { st: s, qI: s, wI: s, kNew: s, kI: s, scores: s, cnt: s, sel: s, ireads: s };
    await expect(decodeDsaDispatches(gpu, P, storage, 'bad', 64)).rejects.toThrow(/kI holds 256 bytes/);
    for (const buf of arena.buffers) buf.destroy();
  });
});
