// DSA indexer kernels vs the float64 twin (docs/dsa-spec.md), batched over B sequences, on shapes
// with T < k, k = 1, T not a multiple of 64 or of anything else, both phases: scores rel RMS ≤ 1e-5
// (f32 vs f64); top-k EXACTLY equal to the twin's top-k of the GPU's own scores (and to the twin's
// f64 selection: the cases have no near-tie at the boundary, asserted); klRows and dScores
// ≤ 1e-5 against the twin on the GPU's scores; dqI, dwI, dkI ≤ 1e-5 against the twin on the GPU's
// dScores (f32 sums of ≤ T terms); 64 and 1 top-k lanes give the same selection.
import { describe, expect, it } from 'vitest';

import { type DsaConfig, type DsaPhase, dsaSlotWidth } from '../../src/definitions/dsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { denseSlots, indexerBackwardRef, indexScoresRef, selectedSlots } from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { runIndexerGpu } from './harness';

const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a));
const TOL = 1e-5;

interface Case {
  name: string;
  s: AttentionShape;
  cfg: DsaConfig;
}
const cfg = (indexHeads: number, indexDim: number, topK: number): DsaConfig => ({
  indexHeads,
  indexDim,
  topK,
  warmupSteps: 0,
  lossWeight: 1,
});
const CASES: Case[] = [
  { name: 'B=2 T=13 H=4 G=2 H_I=3 d_I=4 k=4', s: { B: 2, T: 13, H: 4, G: 2, dk: 4, dv: 3 }, cfg: cfg(3, 4, 4) },
  { name: 'T < k (T=5, k=8), H_I=1, d_I=2, G=1', s: { B: 2, T: 5, H: 2, G: 1, dk: 4, dv: 2 }, cfg: cfg(1, 2, 8) },
  { name: 'k=1, T=9, H=3, G=3', s: { B: 1, T: 9, H: 3, G: 3, dk: 6, dv: 2 }, cfg: cfg(2, 6, 1) },
  { name: 'T=70 (> 64 lanes, odd), k=11, d_I = dk', s: { B: 1, T: 70, H: 2, G: 1, dk: 4, dv: 4 }, cfg: cfg(2, 4, 11) },
];

/** Smallest gap between the take-th and the (take+1)-th score of a row, exact ties skipped. */
function boundaryGap(I: Float64Array, T: number, k: number): number {
  let gap = Infinity;
  for (let t = 0; t < T; t++) {
    const v = Array.from(I.subarray(t * T, t * T + t + 1)).sort((a, b) => b - a);
    if (k < v.length && v[k - 1] !== v[k]) gap = Math.min(gap, v[k - 1] - v[k]);
  }
  return gap;
}

const seq = (a: ArrayLike<number>, b: number, n: number) => new Float64Array(Array.from(a).slice(b * n, (b + 1) * n));
const cat = (parts: ArrayLike<number>[]) => Float64Array.from(parts.flatMap((p) => Array.from(p)));

describe('DSA indexer kernels vs the twin', () => {
  it.each(CASES)('$name', async ({ s, cfg: c }) => {
    const gpu = await getGpu();
    const { B, T, H, G, dk, dv } = s;
    const one = { T, H, G, dk, dv };
    const d = { T, indexHeads: c.indexHeads, indexDim: c.indexDim };
    const r = rng(T * 31 + c.topK);
    const qI = F(randn(B * T * c.indexHeads * c.indexDim, r));
    const kI = F(randn(B * T * c.indexDim, r));
    const wI = F(randn(B * T * c.indexHeads, r));
    const q = F(randn(B * T * H * dk, r));
    const k = F(randn(B * T * G * dk, r));
    const v = F(randn(B * T * G * dv, r));
    // Twin per sequence: scores, selection, the main attention's lse (dense and over the selection).
    const I64: Float64Array[] = [];
    const sel64: Int32Array[] = [];
    const lse = { warmup: [] as Float64Array[], sparse: [] as Float64Array[] };
    for (let b = 0; b < B; b++) {
      const x = (a: Float64Array, n: number) => seq(a, b, n);
      const I = indexScoresRef(x(qI, T * c.indexHeads * c.indexDim), x(kI, T * c.indexDim), x(wI, T * c.indexHeads), d);
      I64.push(I);
      expect(boundaryGap(I, T, c.topK), 'no near-tie at the top-k boundary').toBeGreaterThan(1e-4);
      const sel = selectTokensRef(I, T, G, c.topK);
      sel64.push(sel);
      const [qb, kb, vb] = [x(q, T * H * dk), x(k, T * G * dk), x(v, T * G * dv)];
      lse.warmup.push(dsaAttentionForwardRef(qb, kb, vb, selectTokensRef(I, T, G, T), one, T).lse);
      lse.sparse.push(dsaAttentionForwardRef(qb, kb, vb, sel, one, c.topK).lse);
    }
    const gradScale = 0.7 / (B * T);
    const inputs = { qI, kI, wI, q, k, lse: { warmup: cat(lse.warmup), sparse: cat(lse.sparse) } };
    const run = await runIndexerGpu(gpu, s, c, inputs, gradScale, 64);
    expectClose('scores', run.scores, cat(I64), TOL);
    for (let b = 0; b < B; b++) {
      const Ig = seq(run.scores, b, T * T);
      const selB = run.sel.slice(b * T * G * c.topK, (b + 1) * T * G * c.topK);
      expect(Array.from(selB), `sel (b=${b}) = twin top-k of the GPU scores`).toEqual(Array.from(selectTokensRef(Ig, T, G, c.topK)));
      expect(Array.from(selB), `sel (b=${b}) = twin f64 selection`).toEqual(Array.from(sel64[b]));
    }
    // One lane per row gives the same selection.
    const serial = await runIndexerGpu(gpu, s, c, inputs, gradScale, 1);
    expect(Array.from(serial.sel)).toEqual(Array.from(run.sel));
    for (const phase of ['warmup', 'sparse'] as DsaPhase[]) {
      const W = dsaSlotWidth(phase, T, c.topK);
      const want = {
        klRows: [] as Float64Array[],
        dScores: [] as Float64Array[],
        dqI: [] as Float64Array[],
        dwI: [] as Float64Array[],
        dkI: [] as Float64Array[],
      };
      for (let b = 0; b < B; b++) {
        const x = (a: ArrayLike<number>, n: number) => seq(a, b, n);
        const slots = phase === 'warmup' ? denseSlots(T) : selectedSlots(sel64[b], G, c.topK);
        const kl = indexerKlRef(
          x(q, T * H * dk),
          x(k, T * G * dk),
          x(inputs.lse[phase], H * T),
          x(run.scores, T * T),
          slots,
          one,
          gradScale,
        );
        want.klRows.push(kl.klRows);
        want.dScores.push(kl.dI);
        const g = indexerBackwardRef(
          x(qI, T * c.indexHeads * c.indexDim),
          x(kI, T * c.indexDim),
          x(wI, T * c.indexHeads),
          x(run.phases[phase].dScores, T * W),
          slots,
          d,
        );
        want.dqI.push(g.dqI);
        want.dwI.push(g.dwI);
        want.dkI.push(g.dkI);
      }
      const got = run.phases[phase];
      for (const name of ['klRows', 'dScores', 'dqI', 'dwI', 'dkI'] as const) {
        const expected = cat(want[name]);
        // k = 1 in the sparse phase: one slot per row, KL and every gradient exactly 0.
        if (phase === 'sparse' && c.topK === 1)
          expect(
            Array.from(got[name]).every((e) => e === 0),
            `${phase} ${name} = 0`,
          ).toBe(true);
        else expectClose(`${phase} ${name}`, got[name], expected, TOL);
      }
    }
  });
});
