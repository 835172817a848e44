// DSA's indexer inside a layer (docs/dsa-spec.md sections 5, 6), float64: ∂L_I/∂WqI, WkI, WwI
// through the projections and RoPE vs central finite differences (rel RMS ≤ 1e-6; the sparse phase
// with the selection frozen), with and without RoPE, B = 2; the warm-up's output is dense attention
// and L_I does not depend on the main q/K/V beyond the (detached) target.
import { describe, expect, it } from 'vitest';

import type { DsaConfig, DsaPhase } from '../../src/definitions/dsa-config';
import { attentionForwardRef } from '../../src/reference/attention';
import { dsaLayerAttentionRef } from '../../src/reference/dsa/layer';
import { randn, rng } from '../helpers/compare';
import { expectGradient } from '../helpers/finite-diff';

const cfg: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 3, warmupSteps: 2, lossWeight: 0.8 };

describe('DSA indexer in a layer: parameter gradients vs finite differences (rel RMS ≤ 1e-6)', () => {
  it.each([
    ['warmup', 10000],
    ['sparse', 10000],
    ['sparse', undefined],
  ] as [DsaPhase, number | undefined][])('%s, ropeTheta %s', (phase, ropeTheta) => {
    const r = rng(phase.length + (ropeTheta ?? 1));
    const shape = { B: 2, T: 9, C: 5, H: 4, G: 2, dk: 4, dv: 3, ropeTheta };
    const N = shape.B * shape.T;
    const x = randn(N * shape.C, r);
    const W = {
      wqI: randn(shape.C * cfg.indexHeads * cfg.indexDim, r),
      wkI: randn(shape.C * cfg.indexDim, r),
      wwI: randn(shape.C * cfg.indexHeads, r),
    };
    const q = randn(N * shape.H * shape.dk, r);
    const K = randn(N * shape.G * shape.dk, r);
    const V = randn(N * shape.G * shape.dv, r);
    const base = dsaLayerAttentionRef(x, W, q, K, V, shape, cfg, phase);
    const sels = base.seqs.map((s) => s.sel);
    const loss = () => dsaLayerAttentionRef(x, W, q, K, V, shape, cfg, phase, sels).indexLoss;
    expect(base.indexLoss).toBeGreaterThan(0);
    expectGradient('dWqI', base.grads.dwqI, loss, W.wqI, { tol: 1e-6, minNorm: 1e-4 });
    expectGradient('dWkI', base.grads.dwkI, loss, W.wkI, { tol: 1e-6, minNorm: 1e-4 });
    expectGradient('dWwI', base.grads.dwwI, loss, W.wwI, { tol: 1e-6, minNorm: 1e-4 });
    if (phase === 'warmup') {
      const dense = attentionForwardRef(q, K, V, { B: 2, T: 9, H: 4, G: 2, dk: 4, dv: 3 });
      for (let i = 0; i < dense.out.length; i++) expect(Math.abs(base.out[i] - dense.out[i])).toBeLessThan(1e-12);
    }
  });
});
