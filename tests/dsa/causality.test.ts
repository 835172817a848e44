// DSA causality in the float64 twin (docs/dsa-spec.md section 10): changing every input at
// position s (qI, kI, wI, q, K, V) leaves the index scores, the selection, the main attention's
// output and lse, the KL rows and dI at every t < s unchanged bit for bit (warm-up and sparse);
// with a loss that reads only rows t < s, every gradient at positions ≥ s is exactly 0 and every
// gradient at positions < s keeps its bits.
import { describe, expect, it } from 'vitest';

import type { DsaShape } from '../../src/definitions/dsa-config';
import { dsaAttentionBackwardRef, dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { denseSlots, indexerBackwardRef, type IndexerDims, indexScoresRef, selectedSlots } from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { randn, rng } from '../helpers/compare';
import { type DsaInputs, randomDsaInputs } from './helpers';

const shape: DsaShape = { T: 14, H: 4, G: 2, dk: 4, dv: 3 };
const d: IndexerDims = { T: 14, indexHeads: 2, indexDim: 4 };
const K_TOP = 5;

/** Every tensor of one forward and backward; rows < s of dO and of dI (both phases) are the upstream. */
function pipeline(x: DsaInputs, dO: Float64Array, s: number) {
  const { T, G } = shape;
  const I = indexScoresRef(x.qI, x.kI, x.wI, d);
  const sel = selectTokensRef(I, T, G, K_TOP);
  const fwd = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, K_TOP);
  const grads = dsaAttentionBackwardRef(x.q, x.K, x.V, sel, fwd, dO, shape, K_TOP);
  const allSel = selectTokensRef(I, T, G, T);
  const dense = dsaAttentionForwardRef(x.q, x.K, x.V, allSel, shape, T);
  const out: Record<string, { rows: number; data: ArrayLike<number> }> = {
    I: { rows: T, data: I },
    sel: { rows: T, data: sel },
    o: { rows: T, data: fwd.o },
    dq: { rows: T, data: grads.dq },
    dK: { rows: T, data: grads.dK },
    dV: { rows: T, data: grads.dV },
  };
  for (const [phase, slots, lse] of [
    ['warm-up', denseSlots(T), dense.lse],
    ['sparse', selectedSlots(sel, G, K_TOP), fwd.lse],
  ] as const) {
    const kl = indexerKlRef(x.q, x.K, lse, I, slots, shape, 0.5);
    const dI = Float64Array.from(kl.dI).fill(0, s * slots.width); // the loss reads rows < s only
    const g = indexerBackwardRef(x.qI, x.kI, x.wI, dI, slots, d);
    out[`${phase} klRows`] = { rows: T, data: kl.klRows };
    out[`${phase} dI`] = { rows: T, data: kl.dI };
    out[`${phase} dqI`] = { rows: T, data: g.dqI };
    out[`${phase} dkI`] = { rows: T, data: g.dkI };
    out[`${phase} dwI`] = { rows: T, data: g.dwI };
  }
  // lse is [H, T]: compare it per head.
  return { out, lse: fwd.lse };
}

describe('DSA twin causality (bit for bit)', () => {
  it.each([0, 1, 6, 13])('inputs changed at s = %i', (s) => {
    const r = rng(40 + s);
    const { T, H } = shape;
    const x = randomDsaInputs(shape, d, r);
    const dO = randn(T * H * shape.dv, r).fill(0, s * H * shape.dv);
    const a = pipeline(x, dO, s);
    const y: DsaInputs = {
      qI: Float64Array.from(x.qI),
      kI: Float64Array.from(x.kI),
      wI: Float64Array.from(x.wI),
      q: Float64Array.from(x.q),
      K: Float64Array.from(x.K),
      V: Float64Array.from(x.V),
    };
    for (const t of Object.values(y)) {
      const w = t.length / T;
      for (let e = s * w; e < (s + 1) * w; e++) t[e] += 3 + e;
    }
    const b = pipeline(y, dO, s);
    let compared = 0;
    for (const [name, { rows, data }] of Object.entries(a.out)) {
      const w = data.length / rows;
      const other = b.out[name].data;
      for (let e = 0; e < s * w; e++) {
        expect(Object.is(other[e], data[e]), `${name}[${e}] (row ${Math.floor(e / w)} < ${s})`).toBe(true);
        compared++;
      }
      // Gradients at positions ≥ s are exactly 0 when the loss reads rows < s only.
      if (name.startsWith('d') || / d/.test(name)) {
        if (name.endsWith('dI')) continue;
        for (let e = s * w; e < data.length; e++) expect(Math.abs(other[e]), `${name}[${e}] (row ≥ ${s}) must be 0`).toBe(0);
      }
    }
    for (let i = 0; i < H; i++) for (let t = 0; t < s; t++) expect(Object.is(b.lse[i * T + t], a.lse[i * T + t])).toBe(true);
    if (s > 0) expect(compared).toBeGreaterThan(100);
  });
});
