// Property 4: Σ_j p_slc[t,i,j] = Σ_k p_cmp[t,i,k] (= 1 when ncmp(t) > 0, else exactly 0), and a
// query that sees no compressed block outputs exactly 0 with no NaN anywhere.
import { describe, expect, it } from 'vitest';

import { visibleCmpBlocks } from '../../src/definitions/nsa-blocks';
import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { CASES, randomInputs } from './helpers';

// Sums of ≤ 40 probabilities in float64: rounding stays below 1e-14.
const TOL = 1e-14;

describe('property 4: selection mass equals compressed mass', () => {
  it.each(CASES.map((k) => [k.name, k] as const))('%s', (_n, { c, shape }) => {
    const { T, H, dv } = shape;
    const f = nsaForwardRef(randomInputs(shape, c, 31), shape, c);
    const N = f.nCmp;
    const nB = f.nBlocks;
    for (const x of [f.o, f.cmp.o, f.sel.o, f.win.o, f.pCmp, f.pSlc, f.scores]) {
      expect(x.every(Number.isFinite)).toBe(true);
    }
    for (let t = 0; t < T; t++) {
      const n = visibleCmpBlocks(t, c);
      for (let i = 0; i < H; i++) {
        let mc = 0;
        for (let k = 0; k < N; k++) {
          const p = f.pCmp[(t * H + i) * N + k];
          if (k >= n) expect(p).toBe(0);
          mc += p;
        }
        let ms = 0;
        for (let j = 0; j < nB; j++) ms += f.pSlc[(t * H + i) * nB + j];
        expect(Math.abs(ms - mc)).toBeLessThanOrEqual(TOL);
        if (n > 0) {
          expect(Math.abs(mc - 1)).toBeLessThanOrEqual(TOL);
        } else {
          expect(mc).toBe(0);
          expect(ms).toBe(0);
          expect(f.cmp.lse[i * T + t]).toBe(-Infinity);
          for (let e = 0; e < dv; e++) expect(f.cmp.o[(t * H + i) * dv + e]).toBe(0);
        }
      }
    }
  });
});
