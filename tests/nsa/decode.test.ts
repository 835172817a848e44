// Property 5: decode (KV cache, emission rule, one row at a time, group-centric) equals prefill at
// every position. Both are float64 and perform the same operations per (head, key) in the same
// order, so they agree bit for bit (selections included) — stricter than the spec's "ties within
// float rounding excepted".
// Property 7: the key rows decode reads for token t, per group, are
// ncmp(t) + |selected positions ≤ t| + min(w, t + 1).
import { describe, expect, it } from 'vitest';

import { numCmpBlocks, numSelCandidates, visibleCmpBlocks } from '../../src/definitions/nsa-blocks';
import { NsaDecodeRef } from '../../src/reference/nsa/decode';
import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { BASE, CASES, decodeAll, randomInputs, sameBits } from './helpers';

const ALL = [...CASES, { name: 'long T=80, lSel = 4', c: { ...BASE, lSel: 4, nSel: 4, w: 9 }, shape: { T: 80, H: 4, G: 2, dk: 4, dv: 3 } }];

describe('property 5: decode = prefill, bit for bit', () => {
  it.each(ALL.map((k) => [k.name, k] as const))('%s', (_n, { c, shape }) => {
    const { T, H, G, dv } = shape;
    const inp = randomInputs(shape, c, 51);
    const f = nsaForwardRef(inp, shape, c);
    const steps = decodeAll(inp, shape, c);
    const N = f.nCmp;
    const nB = f.nBlocks;
    for (let t = 0; t < T; t++) {
      const st = steps[t];
      expect(st.t).toBe(t);
      const row = (a: Float64Array | Int32Array, w: number) => a.subarray(t * w, (t + 1) * w);
      expect(Array.from(st.selection), `selection t=${t}`).toEqual(Array.from(row(f.selection, G * c.nSel)));
      expect(sameBits(st.o, row(f.o, H * dv)), `o t=${t}`).toBe(true);
      expect(sameBits(st.oCmp, row(f.cmp.o, H * dv)), `o_cmp t=${t}`).toBe(true);
      expect(sameBits(st.oSel, row(f.sel.o, H * dv)), `o_sel t=${t}`).toBe(true);
      expect(sameBits(st.oWin, row(f.win.o, H * dv)), `o_win t=${t}`).toBe(true);
      const n = visibleCmpBlocks(t, c);
      for (let i = 0; i < H; i++) {
        expect(sameBits(st.pCmp.subarray(i * n, (i + 1) * n), f.pCmp.subarray((t * H + i) * N, (t * H + i) * N + n))).toBe(true);
      }
      const nb = numSelCandidates(t, c);
      for (let g = 0; g < G; g++) {
        expect(sameBits(st.scores.subarray(g * nb, (g + 1) * nb), f.scores.subarray((t * G + g) * nB, (t * G + g) * nB + nb))).toBe(true);
      }
      expect(st.emitted).toBe(t + 1 >= c.l && (t + 1 - c.l) % c.d === 0);
    }
  });

  it('the cache holds Ncmp(T) compressed blocks and refuses a token past its capacity', () => {
    const shape = { T: 13, H: 4, G: 2, dk: 4, dv: 3 };
    const inp = randomInputs(shape, BASE, 52);
    const dec = new NsaDecodeRef({ H: 4, G: 2, dk: 4, dv: 3, capacity: 13 }, BASE);
    const tok = {
      q: inp.q.subarray(0, 16),
      kCmp: inp.kCmp.subarray(0, 8),
      vCmp: inp.vCmp.subarray(0, 6),
      kSel: inp.kSel.subarray(0, 8),
      vSel: inp.vSel.subarray(0, 6),
      kWin: inp.kWin.subarray(0, 8),
      vWin: inp.vWin.subarray(0, 6),
      gates: inp.gates.subarray(0, 12),
    };
    for (let t = 0; t < 13; t++) dec.step(tok);
    expect(dec.length).toBe(13);
    expect(dec.numCompressed).toBe(numCmpBlocks(13, BASE));
    expect(() => dec.step(tok)).toThrow(/cache full/);
    expect(() => new NsaDecodeRef({ H: 4, G: 2, dk: 4, dv: 3, capacity: 8 }, { ...BASE, phi: 'mlp' })).toThrow(/MLP/);
  });
});

describe('property 7: decode reads = ncmp(t) + |selected positions ≤ t| + min(w, t+1)', () => {
  it.each(ALL.map((k) => [k.name, k] as const))('%s', (_n, { c, shape }) => {
    const steps = decodeAll(randomInputs(shape, c, 71), shape, c);
    let sparse = false;
    for (const st of steps) {
      const t = st.t;
      for (let g = 0; g < shape.G; g++) {
        let selPos = 0;
        for (let m = 0; m < c.nSel; m++) {
          const j = st.selection[g * c.nSel + m];
          if (j >= 0) selPos += Math.min(c.lSel, t + 1 - j * c.lSel);
        }
        const r = st.reads[g];
        expect(r.cmp).toBe(visibleCmpBlocks(t, c));
        expect(r.sel).toBe(selPos);
        expect(r.win).toBe(Math.min(c.w, t + 1));
        expect(r.cmp + r.sel + r.win).toBe(visibleCmpBlocks(t, c) + selPos + Math.min(c.w, t + 1));
        if (selPos < t + 1) sparse = true;
      }
    }
    expect(steps.length).toBe(shape.T);
    if (shape.T > c.lSel * c.nSel) expect(sparse).toBe(true);
  });
});
