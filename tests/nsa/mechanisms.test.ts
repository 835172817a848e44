// The window and MoBA mechanisms (docs/nsa-spec.md section 15), float64 twin level: validation
// naming each field, MoBA's selection rules against a direct implementation of the paper's gate
// (own block always, complete past blocks only, ties to the lower block, one selection per group
// from the heads' summed probabilities; with one head per group the raw-score per-head ranking),
// gradients vs central finite differences (selection frozen, rel RMS ≤ 1e-6), causality bit for
// bit, full coverage (= dense causal attention, rel ≤ 1e-12), and the whole model's twin gradient
// vs finite differences for both mechanisms.
import { describe, expect, it } from 'vitest';

import { mobaAsNsa, type MobaConfig, mobaReads, validateMobaConfig, validateWindowConfig } from '../../src/definitions/mechanisms';
import { type ModelConfig, validateModelConfig } from '../../src/definitions/model-config';
import { keysPerQuery } from '../../src/definitions/model-flops';
import type { NsaShape } from '../../src/definitions/nsa-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { attentionForwardRef } from '../../src/reference/attention';
import { mobaBackwardRef, mobaForwardRef, windowMechBackwardRef, windowMechForwardRef } from '../../src/reference/mechanisms';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { randn, relRms, rng } from '../helpers/compare';
import { expectGradient } from '../helpers/finite-diff';
import { denseTestModel } from '../helpers/models';
import { dotAll, headRows, sameBits } from './helpers';

const sh = (T: number, H = 4, G = 2, dk = 4, dv = 3): NsaShape => ({ T, H, G, dk, dv });

function inputs(s: NsaShape, seed: number) {
  const r = rng(seed);
  return { q: randn(s.T * s.H * s.dk, r), k: randn(s.T * s.G * s.dk, r), v: randn(s.T * s.G * s.dv, r) };
}

/** The paper's gate, written directly: per head softmax of q·mean(K_j) over complete blocks, summed over the group's heads. */
function directSelection(q: Float64Array, k: Float64Array, s: NsaShape, c: MobaConfig): number[][] {
  const { T, H, G, dk } = s;
  const B = c.blockSize;
  const h = H / G;
  const rows: number[][] = [];
  for (let t = 0; t < T; t++)
    for (let g = 0; g < G; g++) {
      const bt = Math.floor(t / B);
      const complete = Math.floor((t + 1) / B); // blocks j with j·B + B − 1 ≤ t
      const P = new Float64Array(bt + 1);
      for (let i = g * h; i < (g + 1) * h; i++) {
        const z: number[] = [];
        for (let j = 0; j < complete; j++) {
          let dot = 0;
          for (let e = 0; e < dk; e++) {
            let m = 0;
            for (let u = j * B; u < (j + 1) * B; u++) m += k[(u * G + g) * dk + e];
            dot += q[(t * H + i) * dk + e] * (m / B);
          }
          z.push(dot / Math.sqrt(dk));
        }
        const mx = Math.max(...z);
        const e = z.map((x) => Math.exp(x - mx));
        const sum = e.reduce((a, b) => a + b, 0);
        e.forEach((x, j) => (P[j] += x / sum));
      }
      const others = Array.from({ length: bt }, (_, j) => j).sort((a, b) => P[b] - P[a] || a - b);
      const row = [bt, ...others.slice(0, Math.min(c.topK, bt + 1) - 1)].sort((a, b) => a - b);
      while (row.length < c.topK) row.push(-1);
      rows.push(row);
    }
  return rows;
}

const rowsOf = (sel: Int32Array, n: number) => Array.from({ length: sel.length / n }, (_, r) => [...sel.subarray(r * n, (r + 1) * n)]);

describe('window and MoBA config validation names the field', () => {
  it.each([
    [undefined, 10, 'model.window'],
    [{ w: 0 }, 10, 'model.window.w'],
    [{ w: 2.5 }, 10, 'model.window.w'],
    [{ w: 11 }, 10, 'model.window.w'],
  ])('window %j at seqLen %i → %s', (w, T, field) => {
    const e = validateWindowConfig(w, T);
    expect(e.map((x) => x.field)).toEqual([field]);
  });
  it.each([
    [undefined, 32, ['model.moba']],
    [{ blockSize: 0, topK: 2 }, 32, ['model.moba.blockSize']],
    [{ blockSize: 40, topK: 1 }, 32, ['model.moba.blockSize']],
    [{ blockSize: 8, topK: 0 }, 32, ['model.moba.topK']],
    [{ blockSize: 8, topK: 5 }, 32, ['model.moba.topK']],
    [{ blockSize: 8, topK: 5 }, 33, []],
    [{ blockSize: 1.5, topK: -1 }, 32, ['model.moba.blockSize', 'model.moba.topK']],
  ])('moba %j at seqLen %i → %j', (m, T, fields) => {
    expect(validateMobaConfig(m as MobaConfig, T).map((x) => x.field)).toEqual(fields);
  });
  it('the model config refuses a bad mechanism and accepts good ones', () => {
    const base = denseTestModel(24);
    const fields = (c: ModelConfig) => validateModelConfig(c).map((e) => e.field);
    expect(fields({ ...base, attention: 'window', window: { w: 5 } })).toEqual([]);
    expect(fields({ ...base, attention: 'moba', moba: { blockSize: 4, topK: 6 } })).toEqual([]);
    expect(fields({ ...base, attention: 'moba', moba: { blockSize: 4, topK: 7 } })).toEqual(['model.moba.topK']);
    expect(fields({ ...base, attention: 'window' })).toEqual(['model.window']);
    expect(validateModelConfig({ ...base, attention: 'moba', moba: { blockSize: 4, topK: 7 } })[0].message).toBe(
      'topK (7) is more than the 6 blocks of blockSize 4 in seqLen 24',
    );
  });
});

describe('MoBA selection (section 15.2)', () => {
  const cases: Array<[string, NsaShape, MobaConfig]> = [
    ['GQA h = 2, B = 4, k = 3, T = 29', sh(29), { blockSize: 4, topK: 3 }],
    ['one head per group (the paper), B = 3, k = 2, T = 23', sh(23, 3, 3), { blockSize: 3, topK: 2 }],
    ['k = 1: own block only, T = 13', sh(13, 2, 1), { blockSize: 4, topK: 1 }],
    ['B = 1, k = 4, T = 9', sh(9, 2, 2), { blockSize: 1, topK: 4 }],
  ];
  it.each(cases)('%s: equals the direct gate; own block always; candidates complete past blocks', (_n, s, c) => {
    const x = inputs(s, 3);
    const f = mobaForwardRef(x.q, x.k, x.v, s, c);
    const rows = rowsOf(f.selection, c.topK);
    expect(rows).toEqual(directSelection(x.q, x.k, s, c));
    rows.forEach((row, r) => {
      const t = Math.floor(r / s.G);
      const bt = Math.floor(t / c.blockSize);
      const chosen = row.filter((j) => j >= 0);
      expect(chosen.length).toBe(Math.min(c.topK, bt + 1));
      expect(chosen).toContain(bt);
      for (const j of chosen) expect(j === bt || (j + 1) * c.blockSize - 1 <= t).toBe(true);
    });
  });
  it('one head per group: the ranking is the raw score q·mean(K_j) of that head', () => {
    const s = sh(31, 2, 2);
    const c = { blockSize: 4, topK: 3 };
    const x = inputs(s, 5);
    const f = mobaForwardRef(x.q, x.k, x.v, s, c);
    for (let t = 0; t < s.T; t++)
      for (let g = 0; g < s.G; g++) {
        const bt = Math.floor(t / 4);
        const raw = Array.from({ length: bt }, (_, j) => {
          let d = 0;
          for (let e = 0; e < s.dk; e++) d += x.q[(t * s.H + g) * s.dk + e] * f.means[(j * s.G + g) * s.dk + e];
          return d;
        });
        const best = Array.from({ length: bt }, (_, j) => j)
          .sort((a, b) => raw[b] - raw[a] || a - b)
          .slice(0, Math.min(3, bt + 1) - 1);
        const want = [...best, bt].sort((a, b) => a - b);
        expect([...f.selection.subarray((t * s.G + g) * 3, (t * s.G + g) * 3 + want.length)]).toEqual(want);
      }
  });
  it('ties go to the lower block: equal keys in every block → blocks 0 … k−2 and the own block', () => {
    const s = sh(20, 2, 1);
    const c = { blockSize: 4, topK: 3 };
    const x = inputs(s, 9);
    for (let u = 0; u < s.T; u++) for (let e = 0; e < s.dk; e++) x.k[u * s.dk + e] = x.k[e]; // every key = key 0
    const f = mobaForwardRef(x.q, x.k, x.v, s, c);
    expect(rowsOf(f.selection, 3)[19]).toEqual([0, 1, 4]);
    expect(rowsOf(f.selection, 3)[9]).toEqual([0, 1, 2]);
    expect(rowsOf(f.selection, 3)[5]).toEqual([0, 1, -1]);
  });
  it('keys read: Σ over selected blocks of min(B, t + 1 − j·B) (the spec example: 17 at t = 40); the FLOP model’s keys per query', () => {
    expect(mobaReads(40, [1, 2, 5], { blockSize: 8, topK: 3 })).toBe(17);
    expect(mobaReads(5, [0, -1, -1], { blockSize: 8, topK: 3 })).toBe(6);
    const base = denseTestModel(64);
    // Window: min(w, t + 1); MoBA: the means it scores plus at most topK·B positions; dense t + 1.
    expect([3, 20].map((t) => keysPerQuery({ ...base, attention: 'window', window: { w: 5 } }, t))).toEqual([4, 5]);
    expect([3, 20, 40].map((t) => keysPerQuery({ ...base, attention: 'moba', moba: { blockSize: 8, topK: 3 } }, t))).toEqual([
      4,
      2 + 21,
      5 + 24,
    ]);
    expect(keysPerQuery(base, 40)).toBe(41);
  });
});

describe('gradients vs central finite differences, selection frozen (rel RMS ≤ 1e-6)', () => {
  const R = (s: NsaShape) => randn(s.T * s.H * s.dv, rng(17));
  it.each([
    ['moba GQA', sh(19), { blockSize: 4, topK: 2 }],
    ['moba h = 1', sh(14, 2, 2), { blockSize: 3, topK: 3 }],
  ] as const)('%s', (_n, s, c) => {
    const x = inputs(s, 21);
    const fwd = mobaForwardRef(x.q, x.k, x.v, s, c);
    const dO = R(s);
    const loss = () => dotAll(mobaForwardRef(x.q, x.k, x.v, s, c, fwd.selection).o, dO);
    const g = mobaBackwardRef(x.q, x.k, x.v, fwd, dO, s, c);
    for (const [name, an, at] of [
      ['dq', g.dq, x.q],
      ['dk', g.dK, x.k],
      ['dv', g.dV, x.v],
    ] as const)
      expectGradient(name, an, loss, at, { tol: 1e-6, minNorm: 1e-3 });
  });
  it.each([
    ['window w = 4', sh(17), 4],
    ['window w = 1', sh(9, 2, 1), 1],
  ] as const)('%s', (_n, s, w) => {
    const x = inputs(s, 23);
    const fwd = windowMechForwardRef(x.q, x.k, x.v, s, { w });
    const dO = R(s);
    const loss = () => dotAll(windowMechForwardRef(x.q, x.k, x.v, s, { w }).o, dO);
    const g = windowMechBackwardRef(x.q, x.k, x.v, fwd, dO, s, { w });
    expectGradient('dq', g.dq, loss, x.q, { tol: 1e-6, minNorm: w > 1 ? 1e-3 : undefined });
    expectGradient('dk', g.dK, loss, x.k, { tol: 1e-6, minNorm: w > 1 ? 1e-3 : undefined });
    expectGradient('dv', g.dV, loss, x.v, { tol: 1e-6, minNorm: 1e-3 });
  });
});

describe('causality, bit for bit (property 1)', () => {
  const s = sh(22);
  const moba = { blockSize: 4, topK: 3 };
  const run = (x: ReturnType<typeof inputs>, kind: 'moba' | 'window') =>
    kind === 'moba' ? mobaForwardRef(x.q, x.k, x.v, s, moba) : windowMechForwardRef(x.q, x.k, x.v, s, { w: 5 });
  const back = (x: ReturnType<typeof inputs>, kind: 'moba' | 'window', f: ReturnType<typeof run>, dO: Float64Array) =>
    kind === 'moba'
      ? mobaBackwardRef(x.q, x.k, x.v, f as ReturnType<typeof mobaForwardRef>, dO, s, moba)
      : windowMechBackwardRef(x.q, x.k, x.v, f, dO, s, { w: 5 });
  it.each(['moba', 'window'] as const)('%s: inputs at s change nothing at t < s; gradients of rows < s keep their bits', (kind) => {
    const x = inputs(s, 31);
    const a = run(x, kind);
    const R = randn(s.T * s.H * s.dv, rng(32));
    for (const p of [1, 3, 4, 7, 12, 21]) {
      const r = rng(40 + p);
      const bump = (arr: Float64Array, w: number) => {
        const b = Float64Array.from(arr);
        for (let e = 0; e < w; e++) b[p * w + e] += randn(1, r)[0];
        return b;
      };
      const y = { q: bump(x.q, s.H * s.dk), k: bump(x.k, s.G * s.dk), v: bump(x.v, s.G * s.dv) };
      const b = run(y, kind);
      expect(sameBits(headRows(a.o, p, s.H * s.dv), headRows(b.o, p, s.H * s.dv)), `o rows < ${p}`).toBe(true);
      expect(sameBits(a.o.subarray(p * s.H * s.dv, (p + 1) * s.H * s.dv), b.o.subarray(p * s.H * s.dv, (p + 1) * s.H * s.dv))).toBe(false);
      if (kind === 'moba') {
        const [sa, sb] = [(a as ReturnType<typeof mobaForwardRef>).selection, (b as ReturnType<typeof mobaForwardRef>).selection];
        expect(sameBits(headRows(sa, p, s.G * moba.topK), headRows(sb, p, s.G * moba.topK)), 'selection').toBe(true);
      }
      const dO = Float64Array.from(R).fill(0, p * s.H * s.dv);
      const ga = back(x, kind, a, dO);
      const gb = back(y, kind, b, dO);
      for (const [name, w] of [
        ['dq', s.H * s.dk],
        ['dK', s.G * s.dk],
        ['dV', s.G * s.dv],
      ] as const) {
        expect(sameBits(headRows(ga[name], p, w), headRows(gb[name], p, w)), `${name} rows < ${p}`).toBe(true);
        expect(gb[name].subarray(p * w).every((v) => v === 0)).toBe(true);
      }
    }
  });
});

describe('full coverage (property 2): = dense causal attention (rel ≤ 1e-12)', () => {
  it('moba with topK = ceil(T / B)', () => {
    const s = sh(21);
    const x = inputs(s, 51);
    const f = mobaForwardRef(x.q, x.k, x.v, s, { blockSize: 4, topK: 6 });
    const d = attentionForwardRef(x.q, x.k, x.v, { B: 1, ...s });
    expect(relRms(f.o, d.out)).toBeLessThanOrEqual(1e-12);
    expect(mobaAsNsa({ blockSize: 4, topK: 6 }).nSel).toBe(6);
  });
  it('window with w = T', () => {
    const s = sh(13, 3, 1);
    const x = inputs(s, 52);
    const f = windowMechForwardRef(x.q, x.k, x.v, s, { w: 13 });
    expect(relRms(f.o, attentionForwardRef(x.q, x.k, x.v, { B: 1, ...s }).out)).toBeLessThanOrEqual(1e-12);
  });
});

describe('whole-model twin: every parameter gradient vs finite differences (selection frozen, rel RMS ≤ 1e-6)', () => {
  const B = 2;
  it.each([
    ['window', denseTestModel(9, { attention: 'window', window: { w: 3 }, nLayers: 1, dim: 8, vocabSize: 11, ffnHidden: 6 })],
    ['moba', denseTestModel(10, { attention: 'moba', moba: { blockSize: 3, topK: 2 }, nLayers: 1, dim: 8, vocabSize: 11, ffnHidden: 6 })],
  ] as const)('%s', (_n, c) => {
    const params = new Map([...initParams(paramSpecs(c), 5)].map(([k, v]) => [k, Float64Array.from(v)]));
    const r = rng(6);
    const N = B * c.seqLen;
    const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * c.vocabSize));
    const targets = Int32Array.from({ length: N }, () => Math.floor(r() * c.vocabSize));
    const fwd = modelForwardRef(c, params, tokens, targets, B);
    const selections = fwd.layers.map((L) =>
      c.attention === 'moba'
        ? Int32Array.from(L.attnCache.mech!.flatMap((f) => [...(f as ReturnType<typeof mobaForwardRef>).selection]))
        : new Int32Array(0),
    );
    const grads = modelBackwardRef(c, params, tokens, targets, B, fwd);
    const loss = () => modelForwardRef(c, params, tokens, targets, B, { selections }).loss;
    for (const spec of paramSpecs(c)) {
      const p = params.get(spec.name)!;
      const indices = Array.from({ length: Math.min(p.length, 12) }, (_, i) => Math.floor((i * p.length) / Math.min(p.length, 12)));
      expectGradient(spec.name, grads.get(spec.name)!, loss, p, { tol: 1e-6, indices });
    }
  });
});
