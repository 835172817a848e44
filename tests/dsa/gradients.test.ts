// DSA twin gradients vs central finite differences in float64 (docs/dsa-spec.md section 5): the
// indexer backward, the KL loss gradient dI (warm-up and sparse slots), the chain from the loss to
// qI, kI, wI, and the main attention over the selected tokens. Step h = 1e-5 (truncation ≈ 1e-10,
// rounding ≈ 1e-11), so rel RMS ≤ 1e-6 has a wide margin; a wrong term shows as ≥ 1e-2. The ReLU's
// kink is never within h of a random dot product here (checked: every |qI·kI| > 1e-3).
import { describe, expect, it } from 'vitest';

import type { DsaShape } from '../../src/definitions/dsa-config';
import { dsaAttentionBackwardRef, dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import {
  denseSlots,
  indexerBackwardRef,
  type IndexerDims,
  indexScoresRef,
  type IndexSlots,
  selectedSlots,
} from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { dot } from '../../src/reference/nsa/attention';
import { randn, rng } from '../helpers/compare';
import { expectGradient, fdGradient } from '../helpers/finite-diff';
import { dotAll, randomDsaInputs, randomTokenSelection } from './helpers';

const TOL = 1e-6;
/** analytic vs finite differences; `vanishes`: one key per row, so the gradient is exactly 0 (both sides). */
function check(name: string, analytic: Float64Array, f: () => number, x: Float64Array, vanishes = false): void {
  if (vanishes) {
    expect(
      analytic.every((v) => v === 0),
      `${name} must be exactly 0`,
    ).toBe(true);
    expect(
      fdGradient(f, x).every((v) => Math.abs(v) < 1e-9),
      `${name}: finite differences must vanish`,
    ).toBe(true);
    return;
  }
  expectGradient(name, analytic, f, x, { tol: TOL, minNorm: 1e-3 });
}

interface Case {
  name: string;
  shape: DsaShape;
  d: IndexerDims;
  k: number;
}
const CASES: Case[] = [
  { name: 'T=13, H_I=3, d_I=4, k=4, H=4, G=2', shape: { T: 13, H: 4, G: 2, dk: 4, dv: 3 }, d: { T: 13, indexHeads: 3, indexDim: 4 }, k: 4 },
  { name: 'T < k (T=5, k=8), H_I=1, G=1', shape: { T: 5, H: 2, G: 1, dk: 4, dv: 5 }, d: { T: 5, indexHeads: 1, indexDim: 2 }, k: 8 },
  { name: 'k=1, T=9, H=3, G=3', shape: { T: 9, H: 3, G: 3, dk: 6, dv: 2 }, d: { T: 9, indexHeads: 2, indexDim: 6 }, k: 1 },
];

/** Full ∂/∂I [T, T] from dI by slot. */
function scatter(dI: Float64Array, slots: IndexSlots, T: number): Float64Array {
  const out = new Float64Array(T * T);
  for (let t = 0; t < T; t++)
    for (let m = 0; m < slots.width; m++) {
      const s = slots.token(t, m);
      if (s >= 0) out[t * T + s] += dI[t * slots.width + m];
    }
  return out;
}

function minAbsIndexDot(x: ReturnType<typeof randomDsaInputs>, d: IndexerDims): number {
  let m = Infinity;
  for (let t = 0; t < d.T; t++)
    for (let j = 0; j < d.indexHeads; j++)
      for (let s = 0; s <= t; s++) {
        m = Math.min(m, Math.abs(dot(x.qI, (t * d.indexHeads + j) * d.indexDim, x.kI, s * d.indexDim, d.indexDim)));
      }
  return m;
}

describe('DSA twin gradients vs finite differences (rel RMS ≤ 1e-6)', () => {
  it.each(CASES)('indexer backward, warm-up and sparse slots: $name', ({ shape, d, k }) => {
    const r = rng(shape.T * 7 + k);
    const x = randomDsaInputs(shape, d, r);
    expect(minAbsIndexDot(x, d)).toBeGreaterThan(1e-3);
    const sel = randomTokenSelection(shape.T, shape.G, k, r);
    for (const [phase, slots] of [
      ['warm-up', denseSlots(shape.T)],
      ['sparse', selectedSlots(sel, shape.G, k)],
    ] as const) {
      const R = randn(shape.T * slots.width, r);
      const loss = () => {
        const I = indexScoresRef(x.qI, x.kI, x.wI, d);
        let s = 0;
        for (let t = 0; t < shape.T; t++)
          for (let m = 0; m < slots.width; m++) {
            const u = slots.token(t, m);
            if (u >= 0) s += R[t * slots.width + m] * I[t * shape.T + u];
          }
        return s;
      };
      const g = indexerBackwardRef(x.qI, x.kI, x.wI, R, slots, d);
      check(`${phase} dqI`, g.dqI, loss, x.qI);
      check(`${phase} dkI`, g.dkI, loss, x.kI);
      check(`${phase} dwI`, g.dwI, loss, x.wI);
    }
  });

  it.each(CASES)('KL loss: dI vs ∂/∂I, then through the indexer to qI, kI, wI: $name', ({ shape, d, k }) => {
    const r = rng(shape.T * 11 + k);
    const x = randomDsaInputs(shape, d, r);
    const gradScale = 0.7 / (2 * shape.T); // λ = 0.7, B = 2
    const I0 = indexScoresRef(x.qI, x.kI, x.wI, d);
    const sel = selectTokensRef(I0, shape.T, shape.G, k);
    const dense = dsaAttentionForwardRef(x.q, x.K, x.V, selectTokensRef(I0, shape.T, shape.G, shape.T), shape, shape.T);
    const sparse = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, k);
    for (const [phase, slots, lse] of [
      ['warm-up', denseSlots(shape.T), dense.lse],
      ['sparse', selectedSlots(sel, shape.G, k), sparse.lse],
    ] as const) {
      const I = Float64Array.from(I0);
      const lossOfI = () => gradScale * indexerKlRef(x.q, x.K, lse, I, slots, shape, gradScale).klRows.reduce((a, b) => a + b, 0);
      const kl = indexerKlRef(x.q, x.K, lse, I, slots, shape, gradScale);
      // k = 1 in the sparse phase: U(t) is one token, p = r = 1, KL and dI are exactly 0.
      const one = phase === 'sparse' && k === 1;
      check(`${phase} dI`, scatter(kl.dI, slots, shape.T), lossOfI, I, one);
      const lossOfIndexer = () =>
        gradScale *
        indexerKlRef(x.q, x.K, lse, indexScoresRef(x.qI, x.kI, x.wI, d), slots, shape, gradScale).klRows.reduce((a, b) => a + b, 0);
      const g = indexerBackwardRef(x.qI, x.kI, x.wI, kl.dI, slots, d);
      check(`${phase} dqI (chain)`, g.dqI, lossOfIndexer, x.qI, one);
      check(`${phase} dkI (chain)`, g.dkI, lossOfIndexer, x.kI, one);
      check(`${phase} dwI (chain)`, g.dwI, lossOfIndexer, x.wI, one);
    }
  });

  it.each(CASES)('main attention over the selected tokens: $name', ({ shape, k }) => {
    const r = rng(shape.T * 13 + k);
    const { T, H, G, dk, dv } = shape;
    const q = randn(T * H * dk, r);
    const K = randn(T * G * dk, r);
    const V = randn(T * G * dv, r);
    const sel = randomTokenSelection(T, G, k, r);
    const R = randn(T * H * dv, r);
    const loss = () => dotAll(dsaAttentionForwardRef(q, K, V, sel, shape, k).o, R);
    const g = dsaAttentionBackwardRef(q, K, V, sel, dsaAttentionForwardRef(q, K, V, sel, shape, k), R, shape, k);
    // k = 1: one key per query, softmax = 1 whatever q·K: dq and dK are exactly 0.
    check('dq', g.dq, loss, q, k === 1);
    check('dK', g.dK, loss, K, k === 1);
    check('dV', g.dV, loss, V);
  });
});
