// Property 2: with nSel ≥ nb(T−1) the selected branch is dense causal attention on K_sel/V_sel;
// with w ≥ T the window branch is dense causal attention on K_win/V_win. Both sides are float64 and
// sum keys in the same ascending order, so they agree to rounding: rel RMS ≤ 1e-13.
import { describe, expect, it } from 'vitest';

import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { expectClose, relRms } from '../helpers/compare';
import { BASE, randomInputs } from './helpers';

/** Plain dense causal attention: full score matrix, two-pass softmax. */
function denseCausal(q: Float64Array, K: Float64Array, V: Float64Array, { T, H, G, dk, dv }: NsaShape): Float64Array {
  const o = new Float64Array(T * H * dv);
  const h = H / G;
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < H; i++) {
      const g = Math.floor(i / h);
      const sc: number[] = [];
      for (let s = 0; s <= t; s++) {
        let x = 0;
        for (let e = 0; e < dk; e++) x += q[(t * H + i) * dk + e] * K[(s * G + g) * dk + e];
        sc.push(x / Math.sqrt(dk));
      }
      const m = Math.max(...sc);
      const w = sc.map((x) => Math.exp(x - m));
      const z = w.reduce((a, b) => a + b, 0);
      for (let s = 0; s <= t; s++) {
        for (let e = 0; e < dv; e++) o[(t * H + i) * dv + e] += (w[s] / z) * V[(s * G + g) * dv + e];
      }
    }
  }
  return o;
}

const TOL = 1e-13;

describe('property 2: full coverage equals dense causal attention', () => {
  const selCases: Array<[string, NsaConfig, NsaShape]> = [
    ['nSel = nb(T−1), T=37', { ...BASE, nSel: 5 }, { T: 37, H: 4, G: 2, dk: 4, dv: 3 }],
    ['nSel > nb(T−1), one group', { ...BASE, nSel: 9 }, { T: 30, H: 3, G: 1, dk: 3, dv: 5 }],
    [
      'nSel ≥ blocks, forceInit false, no forced',
      { ...BASE, nSel: 4, forceInit: false, forceLocal: 0 },
      { T: 25, H: 2, G: 2, dk: 4, dv: 2 },
    ],
    ['T < l', { ...BASE, nSel: 1, forceLocal: 0 }, { T: 3, H: 4, G: 2, dk: 4, dv: 3 }],
    ['phi = mlp', { ...BASE, phi: 'mlp', nSel: 4 }, { T: 29, H: 4, G: 2, dk: 4, dv: 3 }],
  ];
  it.each(selCases)('selected branch: %s', (_n, c, shape) => {
    expect(c.nSel).toBeGreaterThanOrEqual(numSelBlocks(shape.T, c));
    const inp = randomInputs(shape, c, 21);
    const f = nsaForwardRef(inp, shape, c);
    expectClose('o_sel', f.sel.o, denseCausal(inp.q, inp.kSel, inp.vSel, shape), TOL);
  });

  it.each([
    ['w = T', { ...BASE, w: 37 }, 37],
    ['w > T', { ...BASE, w: 100 }, 37],
    ['w ≥ T, T < l', { ...BASE, w: 3 }, 3],
    ['w ≥ T, T = 1', { ...BASE, w: 1 }, 1],
  ] as const)('window branch: %s', (_n, c, T) => {
    const shape = { T, H: 4, G: 2, dk: 4, dv: 3 };
    const inp = randomInputs(shape, c, 22);
    expectClose('o_win', nsaForwardRef(inp, shape, c).win.o, denseCausal(inp.q, inp.kWin, inp.vWin, shape), TOL);
  });

  it('control: below full coverage both branches differ from dense attention', () => {
    const shape = { T: 37, H: 4, G: 2, dk: 4, dv: 3 };
    const inp = randomInputs(shape, BASE, 23);
    const f = nsaForwardRef(inp, shape, BASE);
    expect(relRms(f.sel.o, denseCausal(inp.q, inp.kSel, inp.vSel, shape))).toBeGreaterThan(1e-3);
    expect(relRms(f.win.o, denseCausal(inp.q, inp.kWin, inp.vWin, shape))).toBeGreaterThan(1e-3);
  });
});
