// DSA top-k (docs/dsa-spec.md section 3), the target distribution and the config rules (section 8):
// the spec's examples, ties to the lower token, −0 = +0, T < k, NaN refused; k ≥ T makes the main
// attention dense causal attention; the warm-up target is the heads' mean probability.
import { describe, expect, it } from 'vitest';

import { type DsaConfig, validateDsaConfig } from '../../src/definitions/dsa-config';
import { attentionForwardRef } from '../../src/reference/attention';
import { dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { denseSlots, indexScoresRef, selectedSlots } from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef, selectTokensRow, tokenPattern } from '../../src/reference/dsa/topk';
import { sparseAttentionForward } from '../../src/reference/nsa/attention';
import { randn, rng } from '../helpers/compare';
import { randomDsaInputs, randomTokenSelection } from './helpers';

const row = (scores: number[], t: number, k: number) => {
  const out = new Int32Array(k).fill(99);
  selectTokensRow(scores, 0, t, k, out, 0);
  return Array.from(out);
};

describe('DSA top-k', () => {
  it("the spec's examples: ties to the lower index, ascending, −1 padded", () => {
    expect(row([0.2, 0.9, 0, 0.9, 0, 0.1], 5, 3)).toEqual([0, 1, 3]);
    expect(row([0, 0], 1, 3)).toEqual([0, 1, -1]);
    expect(row([5, 1, 7, 7, 7], 4, 2)).toEqual([2, 3]);
    expect(row([1, 1, 1, 1], 3, 2)).toEqual([0, 1]);
  });

  it('−0 and +0 tie (lower index wins); only s ≤ t are candidates', () => {
    expect(row([-0, 0, -0, 0], 3, 1)).toEqual([0]);
    expect(row([0, -0, -1], 2, 1)).toEqual([0]);
    expect(row([-1, -0, 0, 100], 2, 2)).toEqual([1, 2]); // 100 sits at s = 3 > t: not a candidate
  });

  it('T < k: every candidate, then −1', () => {
    expect(row([3, 1, 2], 2, 5)).toEqual([0, 1, 2, -1, -1]);
    expect(row([4], 0, 1)).toEqual([0]);
  });

  it('a NaN score throws, naming t and the token', () => {
    expect(() => row([1, NaN, 0], 2, 2)).toThrow(/NaN score at t=2, token 1/);
  });

  it('every group gets the same row; tokenPattern is its exact transpose', () => {
    const r = rng(3);
    const T = 17;
    const sel = selectTokensRef(randn(T * T, r), T, 3, 5);
    for (let t = 0; t < T; t++)
      for (let g = 1; g < 3; g++) expect(sel.slice((t * 3 + g) * 5, (t * 3 + g + 1) * 5)).toEqual(sel.slice(t * 15, t * 15 + 5));
    const pat = tokenPattern(sel, T, 3, 5);
    for (let s = 0; s < T; s++) {
      const want = [];
      for (let t = 0; t < T; t++) if (Array.from(pat.keys(t, 1)).includes(s)) want.push(t);
      expect(Array.from(pat.queries(s, 1))).toEqual(want);
    }
  });

  it('k ≥ T: the main attention equals dense causal attention (≤ 1e-12)', () => {
    const r = rng(5);
    const shape = { T: 11, H: 4, G: 2, dk: 4, dv: 3 };
    const x = randomDsaInputs(shape, { T: 11, indexHeads: 2, indexDim: 4 }, r);
    const sel = selectTokensRef(indexScoresRef(x.qI, x.kI, x.wI, { T: 11, indexHeads: 2, indexDim: 4 }), 11, 2, 16);
    const a = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, 16);
    const d = attentionForwardRef(x.q, x.K, x.V, { B: 1, ...shape });
    for (let i = 0; i < a.o.length; i++) expect(Math.abs(a.o[i] - d.out[i])).toBeLessThan(1e-12);
  });
});

describe('DSA indexer loss target', () => {
  it('warm-up: p[t, s] is the mean over heads of the dense probabilities; rows sum to 1; KL ≥ 0, 0 iff r = p', () => {
    const r = rng(8);
    const shape = { T: 9, H: 4, G: 2, dk: 4, dv: 3 };
    const d = { T: 9, indexHeads: 2, indexDim: 4 };
    const x = randomDsaInputs(shape, d, r);
    const { T, H } = shape;
    const probs = new Float64Array(T * H * T);
    const sel = selectTokensRef(indexScoresRef(x.qI, x.kI, x.wI, d), T, 2, T);
    const fwd = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, T);
    // The per-head probabilities straight from the forward.
    sparseAttentionForward(x.q, x.K, x.V, { ...shape, S: T }, tokenPattern(sel, T, 2, T), (t, i, keys, p) => {
      for (let j = 0; j < keys.length; j++) probs[(t * H + i) * T + keys[j]] = p[j];
    });
    const I = indexScoresRef(x.qI, x.kI, x.wI, d);
    const kl = indexerKlRef(x.q, x.K, fwd.lse, I, denseSlots(T), shape, 1);
    for (let t = 0; t < T; t++) {
      let sum = 0;
      for (let s = 0; s <= t; s++) {
        let mean = 0;
        for (let i = 0; i < H; i++) mean += probs[(t * H + i) * T + s] / H;
        expect(Math.abs(kl.target[t * T + s] - mean)).toBeLessThan(1e-14);
        sum += kl.target[t * T + s];
      }
      expect(Math.abs(sum - 1)).toBeLessThan(1e-14);
      expect(kl.klRows[t]).toBeGreaterThanOrEqual(0);
    }
    // Scores equal to log p make r = p: KL = 0 and dI = 0 (to rounding).
    const Ip = new Float64Array(T * T);
    for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) Ip[t * T + s] = Math.log(kl.target[t * T + s]) + 3;
    const kl0 = indexerKlRef(x.q, x.K, fwd.lse, Ip, denseSlots(T), shape, 1);
    for (let t = 0; t < T; t++) expect(Math.abs(kl0.klRows[t])).toBeLessThan(1e-14);
    for (const v of kl0.dI) expect(Math.abs(v)).toBeLessThan(1e-14);
  });

  it('sparse: U(t) is the selection; −1 slots have dI = 0', () => {
    const r = rng(9);
    const shape = { T: 10, H: 2, G: 1, dk: 4, dv: 2 };
    const x = randomDsaInputs(shape, { T: 10, indexHeads: 1, indexDim: 2 }, r);
    const sel = randomTokenSelection(10, 1, 4, r);
    const fwd = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, 4);
    const kl = indexerKlRef(x.q, x.K, fwd.lse, randn(100, r), selectedSlots(sel, 1, 4), shape, 1);
    for (let t = 0; t < 10; t++) {
      let sum = 0;
      for (let m = 0; m < 4; m++) {
        if (sel[t * 4 + m] < 0) expect(kl.dI[t * 4 + m]).toBe(0);
        sum += kl.target[t * 4 + m];
      }
      expect(Math.abs(sum - 1)).toBeLessThan(1e-14);
    }
  });
});

describe('DSA config validation names each field', () => {
  const ok: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 8, warmupSteps: 10, lossWeight: 1 };
  const fields = (c: Partial<DsaConfig>, shape?: object) => validateDsaConfig({ ...ok, ...c }, shape).map((i) => i.field);
  it.each([
    [{ topK: 0 }, 'dsa.topK'],
    [{ topK: 2.5 }, 'dsa.topK'],
    [{ indexHeads: 0 }, 'dsa.indexHeads'],
    [{ indexDim: 0 }, 'dsa.indexDim'],
    [{ indexDim: 3 }, 'dsa.indexDim'],
    [{ warmupSteps: -1 }, 'dsa.warmupSteps'],
    [{ lossWeight: 0 }, 'dsa.lossWeight'],
    [{ lossWeight: Number.NaN }, 'dsa.lossWeight'],
  ])('%o → %s', (c, field) => {
    expect(fields(c)).toEqual([field]);
  });
  it('an indexer wider than the head (indexDim > dk) is refused', () => {
    expect(fields({ indexDim: 8 }, { T: 4, H: 2, G: 1, dk: 4, dv: 4 })).toEqual(['dsa.indexDim']);
    expect(fields({ indexDim: 4 }, { T: 4, H: 2, G: 1, dk: 4, dv: 4 })).toEqual([]);
  });
  it('k ≥ T is valid (dense through the sparse path)', () => {
    expect(fields({ topK: 100 }, { T: 4, H: 2, G: 1, dk: 4, dv: 4 })).toEqual([]);
  });
});
