// Property 1: changing the inputs at position s changes no output, selection or gradient at any
// t < s — bit for bit. For gradients the loss reads only rows t < s (dO rows ≥ s are 0); its
// gradient with respect to every input at positions < s (and every MLP weight) must keep its bits,
// and its gradient at positions ≥ s must be exactly 0.
import { describe, expect, it } from 'vitest';

import { numCmpBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaShape } from '../../src/definitions/nsa-config';
import { nsaBackwardRef, nsaForwardRef } from '../../src/reference/nsa/layer';
import { randn, rng } from '../helpers/compare';
import { CASES, headRows, randomInputs, sameBits, type TestInputs } from './helpers';

const PICK = [
  'base T=37',
  'one group',
  'one head per group',
  'w = 1',
  'forceInit false, no forced blocks',
  'l = d = lSel',
  'd = 1, l = 3, lSel = 6',
  'phi = mlp',
];

function perturbAt(inp: TestInputs, shape: NsaShape, s: number, seed: number): TestInputs {
  const { H, G, dk, dv } = shape;
  const r = rng(seed);
  const bump = (a: Float64Array, width: number) => {
    const b = Float64Array.from(a);
    const noise = randn(width, r);
    for (let e = 0; e < width; e++) b[s * width + e] += noise[e];
    return b;
  };
  const gates = Float64Array.from(inp.gates);
  for (let e = 0; e < H * 3; e++) gates[s * H * 3 + e] = 0.05 + 0.9 * r();
  return {
    ...inp,
    q: bump(inp.q, H * dk),
    kCmp: bump(inp.kCmp, G * dk),
    vCmp: bump(inp.vCmp, G * dv),
    kSel: bump(inp.kSel, G * dk),
    vSel: bump(inp.vSel, G * dv),
    kWin: bump(inp.kWin, G * dk),
    vWin: bump(inp.vWin, G * dv),
    gates,
  };
}

describe('property 1: causality, bit for bit', () => {
  const cases = CASES.filter((k) => PICK.includes(k.name));
  it('covers the picked cases', () => expect(cases.length).toBe(PICK.length));
  it.each(cases.map((k) => [k.name, k] as const))('%s', (_n, { c, shape }) => {
    const { T, H, G, dk, dv } = shape;
    const inp = randomInputs(shape, c, 11);
    const a = nsaForwardRef(inp, shape, c);
    const nB = a.nBlocks;
    const N = a.nCmp;
    const R = randn(T * H * dv, rng(12));
    for (const s of [...new Set([0, 1, c.l - 1, c.l, c.lSel, Math.floor(T / 2), T - 1])].filter((x) => x < T)) {
      const inp2 = perturbAt(inp, shape, s, 100 + s);
      const b = nsaForwardRef(inp2, shape, c);
      const same = (name: string, x: Float64Array | Int32Array, y: Float64Array | Int32Array, width: number) =>
        expect(sameBits(headRows(x, s, width), headRows(y, s, width)), `${name} rows < ${s}`).toBe(true);
      same('o', a.o, b.o, H * dv);
      same('o_cmp', a.cmp.o, b.cmp.o, H * dv);
      same('o_sel', a.sel.o, b.sel.o, H * dv);
      same('o_win', a.win.o, b.win.o, H * dv);
      same('p_cmp', a.pCmp, b.pCmp, H * N);
      same('p_slc', a.pSlc, b.pSlc, H * nB);
      same('scores', a.scores, b.scores, G * nB);
      same('selection', a.selection, b.selection, G * c.nSel);
      for (const br of ['cmp', 'sel', 'win'] as const) {
        for (let i = 0; i < H; i++) {
          const la = a[br].lse.subarray(i * T, i * T + s);
          const lb = b[br].lse.subarray(i * T, i * T + s);
          expect(sameBits(la, lb), `lse_${br} head ${i}`).toBe(true);
        }
      }
      // Compressed blocks made only of positions < s.
      const ns = numCmpBlocks(s, c);
      expect(sameBits(a.kc.subarray(0, ns * G * dk), b.kc.subarray(0, ns * G * dk)), 'kc').toBe(true);
      expect(sameBits(a.vc.subarray(0, ns * G * dv), b.vc.subarray(0, ns * G * dv)), 'vc').toBe(true);
      // Non-vacuous: the perturbation does reach row s.
      expect(sameBits(a.o.subarray(s * H * dv, (s + 1) * H * dv), b.o.subarray(s * H * dv, (s + 1) * H * dv))).toBe(false);

      const dO = Float64Array.from(R);
      dO.fill(0, s * H * dv);
      const ga = nsaBackwardRef(inp, shape, c, a, dO);
      const gb = nsaBackwardRef(inp2, shape, c, b, dO);
      const grads = [
        ['dq', H * dk],
        ['dkCmp', G * dk],
        ['dvCmp', G * dv],
        ['dkSel', G * dk],
        ['dvSel', G * dv],
        ['dkWin', G * dk],
        ['dvWin', G * dv],
        ['dGates', H * 3],
      ] as const;
      for (const [name, width] of grads) {
        same(name, ga[name], gb[name], width);
        for (const g of [ga, gb]) {
          const tail = g[name].subarray(s * width);
          expect(
            tail.every((x) => x === 0),
            `${name} rows ≥ ${s} are 0`,
          ).toBe(true);
        }
      }
      // Row 0 reads one key per branch, so dq[0] is 0; from s = 2 on rows < s must carry gradient.
      if (s > 1)
        expect(
          ga.dq.subarray(0, s * H * dk).some((x) => x !== 0),
          'dq is not trivially 0',
        ).toBe(true);
      if (ga.dMlpK && gb.dMlpK && ga.dMlpV && gb.dMlpV) {
        for (const k of ['pos', 'w1', 'b1', 'w2', 'b2'] as const) {
          expect(sameBits(ga.dMlpK[k], gb.dMlpK[k]), `mlp.k.${k}`).toBe(true);
          expect(sameBits(ga.dMlpV[k], gb.dMlpV[k]), `mlp.v.${k}`).toBe(true);
        }
      } else {
        expect(c.phi).toBe('avg');
      }
    }
  });
});
