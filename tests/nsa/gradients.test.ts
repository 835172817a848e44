// Property 6 (reference level): every backward vs central finite differences in float64.
// Step h = 1e-5: truncation O(h²) ≈ 1e-10 and rounding O(ε/h) ≈ 1e-11, so rel RMS ≤ 1e-6 leaves
// a wide margin while any wrong term (a missed key, a wrong scale) shows up as O(1e-1) or more.
// The whole layer (selection frozen) is tests/nsa/gradients-layer.test.ts.
import { describe, expect, it } from 'vitest';

import { numCmpBlocks, numSelCandidates } from '../../src/definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import { compressedBackwardRef, compressedForwardRef } from '../../src/reference/nsa/compressed';
import { compressBackwardRef, compressRef, gelu, geluGrad } from '../../src/reference/nsa/compression';
import { gateBackwardRef, gateForwardRef } from '../../src/reference/nsa/gates';
import { selectedBackwardRef, selectedForwardRef } from '../../src/reference/nsa/selected';
import { windowBackwardRef, windowForwardRef } from '../../src/reference/nsa/window';
import { randn, rng } from '../helpers/compare';
import { expectGradient, fdDerivative, fdGradient } from '../helpers/finite-diff';
import { BASE, CASES, dotAll, MLP_HIDDEN, randomMlp } from './helpers';
import { randomInputs } from './helpers';

const TOL = 1e-6;

/** analytic vs central differences (h = 1e-5) over every element of x; unless told, ‖fd‖ > 1e-3. */
function check(name: string, analytic: Float64Array, f: () => number, x: Float64Array, mustBeNonzero = true): number {
  return expectGradient(name, analytic, f, x, { tol: TOL, minNorm: mustBeNonzero ? 1e-3 : undefined }).err;
}

/** A random valid selection [T,G,nSel] that ignores the scores: exercises gaps and the reverse index. */
function randomSelection(shape: NsaShape, c: NsaConfig, r: () => number): Int32Array {
  const sel = new Int32Array(shape.T * shape.G * c.nSel).fill(-1);
  for (let t = 0; t < shape.T; t++) {
    for (let g = 0; g < shape.G; g++) {
      const cand = Array.from({ length: numSelCandidates(t, c) }, (_, j) => j);
      for (let m = cand.length - 1; m > 0; m--) {
        const x = Math.floor(r() * (m + 1));
        [cand[m], cand[x]] = [cand[x], cand[m]];
      }
      const pick = cand.slice(0, Math.min(c.nSel, cand.length)).sort((a, b) => a - b);
      sel.set(pick, (t * shape.G + g) * c.nSel);
    }
  }
  return sel;
}

describe('compression backward vs finite differences (rel RMS ≤ 1e-6)', () => {
  it.each([
    ['avg', { ...BASE }, 23],
    ['avg, l = d', { ...BASE, l: 4, d: 4, lSel: 8 }, 18],
    ['avg, d = 1', { ...BASE, l: 3, d: 1, lSel: 6 }, 11],
    ['mlp', { ...BASE, phi: 'mlp' as const }, 15],
    ['mlp, d = 1', { ...BASE, phi: 'mlp' as const, l: 3, d: 1, lSel: 6 }, 9],
  ])('%s', (_n, c, T) => {
    const G = 2;
    const D = 3;
    const r = rng(T);
    const X = randn(T * G * D, r);
    const W = c.phi === 'mlp' ? randomMlp(D, MLP_HIDDEN, c.l, r) : undefined;
    const R = randn(numCmpBlocks(T, c) * G * D, r);
    const loss = () => dotAll(compressRef(X, T, G, D, c, W).out, R);
    const g = compressBackwardRef(X, T, G, D, c, compressRef(X, T, G, D, c, W), R, W);
    check('dX', g.dX, loss, X);
    if (W) {
      const dW = g.dW;
      expect(dW).toBeDefined();
      if (!dW) return;
      for (const k of ['pos', 'w1', 'b1', 'w2', 'b2'] as const) check(k, dW[k], loss, W[k]);
    } else {
      expect(g.dW).toBeUndefined();
    }
  });

  it('gelu derivative', () => {
    for (const x of [-3, -1.2, -0.3, 0, 0.4, 1.7, 3.5]) {
      const fd = fdDerivative(gelu, x, 1e-6);
      expect(Math.abs(geluGrad(x) - fd)).toBeLessThan(1e-9);
    }
  });
});

describe('branch backwards vs finite differences (rel RMS ≤ 1e-6)', () => {
  const c: NsaConfig = { ...BASE, lSel: 4, nSel: 3 };
  const shapes: NsaShape[] = [
    { T: 21, H: 4, G: 2, dk: 4, dv: 3 },
    { T: 13, H: 3, G: 1, dk: 3, dv: 5 },
    { T: 3, H: 2, G: 2, dk: 4, dv: 2 },
  ];
  it.each(shapes.map((s) => [`T=${s.T} H=${s.H} G=${s.G} dk=${s.dk} dv=${s.dv}`, s] as const))('compressed, %s', (_n, s) => {
    const r = rng(s.T + 1);
    const N = numCmpBlocks(s.T, c);
    const q = randn(s.T * s.H * s.dk, r);
    const kc = randn(N * s.G * s.dk, r);
    const vc = randn(N * s.G * s.dv, r);
    const R = randn(s.T * s.H * s.dv, r);
    const loss = () => dotAll(compressedForwardRef(q, kc, vc, s, c).o, R);
    const g = compressedBackwardRef(q, kc, vc, compressedForwardRef(q, kc, vc, s, c), R, s, c);
    const any = N > 0;
    check('dq', g.dq, loss, q, any);
    check('dKc', g.dK, loss, kc, any);
    check('dVc', g.dV, loss, vc, any);
  });
  it.each(shapes.map((s) => [`T=${s.T} H=${s.H} G=${s.G}`, s] as const))('selected (random gapped selection), %s', (_n, s) => {
    const r = rng(s.T + 2);
    const q = randn(s.T * s.H * s.dk, r);
    const k = randn(s.T * s.G * s.dk, r);
    const v = randn(s.T * s.G * s.dv, r);
    const sel = randomSelection(s, c, r);
    const R = randn(s.T * s.H * s.dv, r);
    const loss = () => dotAll(selectedForwardRef(q, k, v, sel, s, c).o, R);
    const g = selectedBackwardRef(q, k, v, sel, selectedForwardRef(q, k, v, sel, s, c), R, s, c);
    check('dq', g.dq, loss, q);
    check('dK', g.dK, loss, k);
    check('dV', g.dV, loss, v);
  });
  it.each([1, 3, 50])('window w=%i', (w) => {
    const s = shapes[0];
    const cw = { ...c, w };
    const r = rng(w);
    const q = randn(s.T * s.H * s.dk, r);
    const k = randn(s.T * s.G * s.dk, r);
    const v = randn(s.T * s.G * s.dv, r);
    const R = randn(s.T * s.H * s.dv, r);
    const loss = () => dotAll(windowForwardRef(q, k, v, s, cw).o, R);
    const g = windowBackwardRef(q, k, v, windowForwardRef(q, k, v, s, cw), R, s, cw);
    check('dq', g.dq, loss, q, w > 1);
    check('dK', g.dK, loss, k, w > 1);
    check('dV', g.dV, loss, v);
  });
});

describe('gate backward vs finite differences (rel RMS ≤ 1e-6)', () => {
  it('x, Wg, bg', () => {
    const T = 7;
    const C = 5;
    const H = 3;
    const r = rng(9);
    const x = randn(T * C, r);
    const Wg = randn(C * 3 * H, r, 0.5);
    const bg = randn(3 * H, r);
    const R = randn(T * 3 * H, r);
    const loss = () => dotAll(gateForwardRef(x, Wg, bg, T, C, H), R);
    const g = gateForwardRef(x, Wg, bg, T, C, H);
    const gr = gateBackwardRef(x, Wg, g, R, T, C, H);
    check('dx', gr.dx, loss, x);
    check('dWg', gr.dWg, loss, Wg);
    check('dbg', gr.dbg, loss, bg);
  });
});
