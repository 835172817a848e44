// Top-n selection rules, the reverse index, and the gate helpers (mix and ablations).
import { describe, expect, it } from 'vitest';

import { type GateAblation } from '../../src/definitions/gates';
import { forcedBlocks, numSelBlocks, numSelCandidates } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { applyGateAblation, combineBackwardRef, combineRef, gateAblationBackward } from '../../src/reference/nsa/gates';
import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { selectionReverseIndex, selectTopRow } from '../../src/reference/nsa/selection';
import { randn, rng } from '../helpers/compare';
import { BASE, CASES, randomInputs, sameBits } from './helpers';

describe('top-n selection', () => {
  const configs: NsaConfig[] = [
    BASE,
    { ...BASE, nSel: 3, forceLocal: 2 },
    { ...BASE, nSel: 2, forceInit: false, forceLocal: 0 },
    { ...BASE, nSel: 5, forceInit: false, forceLocal: 3 },
    { ...BASE, lSel: 4, nSel: 1, forceInit: false, forceLocal: 1 },
  ];
  it.each(configs.map((c) => [`nSel=${c.nSel} forceInit=${c.forceInit} forceLocal=${c.forceLocal}`, c] as const))(
    'follows the spec on random scores with ties (%s)',
    (_n, c) => {
      const r = rng(c.nSel * 7 + c.forceLocal);
      for (let t = 0; t < 70; t++) {
        const nb = numSelCandidates(t, c);
        // Scores quantised to 4 levels: many exact ties.
        const P = Float64Array.from({ length: nb }, () => Math.floor(r() * 4) / 4);
        const out = new Int32Array(c.nSel + 2).fill(99);
        selectTopRow(P, 0, t, c, out, 1);
        expect(out[0]).toBe(99);
        expect(out[c.nSel + 1]).toBe(99);
        const row = Array.from(out.subarray(1, c.nSel + 1));
        const take = Math.min(c.nSel, nb);
        const chosen = row.slice(0, take);
        expect(row.slice(take).every((x) => x === -1)).toBe(true);
        for (let m = 1; m < take; m++) expect(chosen[m]).toBeGreaterThan(chosen[m - 1]);
        expect(chosen.every((j) => j >= 0 && j < nb)).toBe(true);
        const forced = forcedBlocks(t, c);
        for (const j of forced) expect(chosen).toContain(j);
        // Every chosen non-forced block beats every unchosen candidate (ties to the lower j).
        for (const j of chosen.filter((x) => !forced.includes(x))) {
          for (let u = 0; u < nb; u++) {
            if (chosen.includes(u)) continue;
            expect(P[j] > P[u] || (P[j] === P[u] && j < u), `t=${t}: chose ${j} (${P[j]}) over ${u} (${P[u]})`).toBe(true);
          }
        }
      }
    },
  );

  it('breaks ties to the lower block', () => {
    const c = { ...BASE, nSel: 3, forceInit: false, forceLocal: 1 };
    const out = new Int32Array(3);
    selectTopRow(new Float64Array(6), 0, 45, c, out, 0); // all scores 0, bt = 5 forced
    expect(Array.from(out)).toEqual([0, 1, 5]);
    selectTopRow(Float64Array.from([0.1, 0.3, 0.3, 0.3, 0.2, 0]), 0, 45, c, out, 0);
    expect(Array.from(out)).toEqual([1, 2, 5]);
  });

  it('throws on a NaN score rather than selecting arbitrarily', () => {
    expect(() => selectTopRow(Float64Array.from([0.2, NaN, 0.1]), 0, 20, { ...BASE, nSel: 2 }, new Int32Array(2), 0)).toThrow(/NaN/);
  });
});

describe('selection reverse index', () => {
  it.each(CASES.map((k) => [k.name, k] as const))('is the exact ascending transpose (%s)', (_n, { c, shape }) => {
    const f = nsaForwardRef(randomInputs(shape, c, 61), shape, c);
    const { offsets, queries } = selectionReverseIndex(f.selection, shape, c);
    const nB = numSelBlocks(shape.T, c);
    expect(offsets.length).toBe(shape.G * nB + 1);
    expect(offsets[0]).toBe(0);
    let total = 0;
    for (let g = 0; g < shape.G; g++) {
      for (let j = 0; j < nB; j++) {
        const want: number[] = [];
        for (let t = 0; t < shape.T; t++) {
          if (Array.from(f.selection.subarray((t * shape.G + g) * c.nSel, (t * shape.G + g + 1) * c.nSel)).includes(j)) want.push(t);
        }
        expect(Array.from(queries.subarray(offsets[g * nB + j], offsets[g * nB + j + 1]))).toEqual(want);
        total += want.length;
      }
    }
    expect(queries.length).toBe(total);
  });
});

describe('gates: mix and ablations', () => {
  const shape = { T: 17, H: 4, G: 2, dk: 4, dv: 3 };
  const inp = randomInputs(shape, BASE, 81);
  const f = nsaForwardRef(inp, shape, BASE);

  it('O = g_cmp·O_cmp + g_sel·O_sel + g_win·O_win', () => {
    const { T, H, dv } = shape;
    for (let r = 0; r < T * H; r++) {
      for (let e = 0; e < dv; e++) {
        const x = r * dv + e;
        const g = inp.gates;
        expect(f.o[x]).toBe(g[3 * r] * f.cmp.o[x] + g[3 * r + 1] * f.sel.o[x] + g[3 * r + 2] * f.win.o[x]);
      }
    }
  });

  it.each([
    ['cmp', 0],
    ['sel', 1],
    ['win', 2],
  ] as const)('forcing %s gives that branch alone', (branch, b) => {
    const g = applyGateAblation(inp.gates, { kind: 'force', branch });
    for (let x = 0; x < g.length; x++) expect(g[x]).toBe(x % 3 === b ? 1 : 0);
    const o = nsaForwardRef({ ...inp, gates: g }, shape, BASE).o;
    expect(sameBits(o, f[branch].o)).toBe(true);
  });

  it('freezing sets constant gates; ablated gates pass no gradient to the gate MLP', () => {
    const half = applyGateAblation(inp.gates, { kind: 'freeze', value: 0.5 });
    expect(half.every((x) => x === 0.5)).toBe(true);
    const mixed = applyGateAblation(inp.gates, { kind: 'freeze', value: [0.2, 0.3, 0.9] });
    for (let x = 0; x < mixed.length; x++) expect(mixed[x]).toBe([0.2, 0.3, 0.9][x % 3]);
    const none = applyGateAblation(inp.gates, { kind: 'none' });
    expect(sameBits(none, inp.gates)).toBe(true);
    expect(none).not.toBe(inp.gates);
    const dG = randn(inp.gates.length, rng(3));
    const ablations: GateAblation[] = [
      { kind: 'force', branch: 'sel' },
      { kind: 'freeze', value: 0.5 },
    ];
    for (const ab of ablations) expect(gateAblationBackward(dG, ab).every((x) => x === 0)).toBe(true);
    expect(sameBits(gateAblationBackward(dG, { kind: 'none' }), dG)).toBe(true);
  });

  it('combineBackwardRef: dO_c = g_c·dO and dg_c = dO·O_c', () => {
    const { T, H, dv } = shape;
    const dO = randn(T * H * dv, rng(5));
    const gr = combineBackwardRef(dO, f.cmp.o, f.sel.o, f.win.o, inp.gates, T, H, dv);
    const o = combineRef(f.cmp.o, f.sel.o, f.win.o, inp.gates, T, H, dv);
    expect(sameBits(o, f.o)).toBe(true);
    for (let r = 0; r < T * H; r++) {
      let s = 0;
      for (let e = 0; e < dv; e++) {
        expect(gr.dOSel[r * dv + e]).toBe(inp.gates[3 * r + 1] * dO[r * dv + e]);
        s += dO[r * dv + e] * f.win.o[r * dv + e];
      }
      expect(gr.dGates[3 * r + 2]).toBe(s);
    }
  });
});
