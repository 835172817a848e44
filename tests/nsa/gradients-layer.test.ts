// Property 6 (reference level) for the whole NSA layer: its backward vs central finite differences
// in float64, with the selection frozen (selection is not differentiable). Step h = 1e-5 (see
// tests/nsa/gradients.test.ts for the tolerance's margin; the branches are tested there).
import { describe, expect, it } from 'vitest';

import { nsaBackwardRef, nsaForwardRef } from '../../src/reference/nsa/layer';
import { randn, rng } from '../helpers/compare';
import { expectGradient, fdGradient } from '../helpers/finite-diff';
import { CASES, dotAll, randomInputs } from './helpers';

const TOL = 1e-6;

/** analytic vs central differences (h = 1e-5) over every element of x; unless told, ‖fd‖ > 1e-3. */
function check(name: string, analytic: Float64Array, f: () => number, x: Float64Array, mustBeNonzero = true): number {
  return expectGradient(name, analytic, f, x, { tol: TOL, minNorm: mustBeNonzero ? 1e-3 : undefined }).err;
}

describe('whole layer backward vs finite differences, selection frozen (rel RMS ≤ 1e-6)', () => {
  // T capped to keep the file fast: 25 for the base case (4 blocks, nSel = 3: still sparse), 20 else.
  const cases = CASES.map((k, n) => [k.name, { c: k.c, shape: { ...k.shape, T: Math.min(k.shape.T, n === 0 ? 25 : 20) } }] as const);
  it.each(cases)('%s', (_n, { c, shape }) => {
    const inp = randomInputs(shape, c, 100 + shape.T);
    const R = randn(shape.T * shape.H * shape.dv, rng(7));
    const fwd = nsaForwardRef(inp, shape, c);
    if (_n === CASES[0].name) expect(fwd.selection.some((j) => j === -1) || fwd.nBlocks > c.nSel).toBe(true);
    const frozen = { selection: fwd.selection };
    const loss = () => dotAll(nsaForwardRef(inp, shape, c, frozen).o, R);
    const g = nsaBackwardRef(inp, shape, c, fwd, R);
    const hasCmp = fwd.nCmp > 0;
    const errs: number[] = [];
    // With T = 1 every branch sees one key, so the output does not depend on q.
    errs.push(check('dq', g.dq, loss, inp.q, shape.T > 1));
    errs.push(check('dkCmp', g.dkCmp, loss, inp.kCmp, hasCmp));
    errs.push(check('dvCmp', g.dvCmp, loss, inp.vCmp, hasCmp));
    errs.push(check('dkSel', g.dkSel, loss, inp.kSel, shape.T > 1));
    errs.push(check('dvSel', g.dvSel, loss, inp.vSel));
    errs.push(check('dkWin', g.dkWin, loss, inp.kWin, shape.T > 1 && c.w > 1));
    errs.push(check('dvWin', g.dvWin, loss, inp.vWin));
    errs.push(check('dGates', g.dGates, loss, inp.gates));
    if (inp.mlp) {
      const { dMlpK, dMlpV } = g;
      expect(dMlpK && dMlpV).toBeTruthy();
      if (!dMlpK || !dMlpV) return;
      for (const k of ['pos', 'w1', 'b1', 'w2'] as const) {
        errs.push(check(`mlp.k.${k}`, dMlpK[k], loss, inp.mlp.k[k], hasCmp));
        errs.push(check(`mlp.v.${k}`, dMlpV[k], loss, inp.mlp.v[k], hasCmp));
      }
      errs.push(check('mlp.v.b2', dMlpV.b2, loss, inp.mlp.v.b2, hasCmp));
      // The key MLP's output bias shifts every compressed key alike: softmax is invariant, so its
      // gradient is 0 up to rounding (FD noise ~1e-10); compare absolutely.
      const fdB2 = fdGradient(loss, inp.mlp.k.b2);
      for (let x = 0; x < fdB2.length; x++) {
        expect(Math.abs(dMlpK.b2[x])).toBeLessThan(1e-12);
        expect(Math.abs(fdB2[x])).toBeLessThan(1e-8);
      }
    }
    expect(Math.max(...errs)).toBeLessThanOrEqual(TOL);
  });
});
