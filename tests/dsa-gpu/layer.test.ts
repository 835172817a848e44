// DSA's indexer in a layer on the GPU (src/model/dsa/indexer.ts + core.ts) vs the float64 twin
// (src/reference/dsa/layer.ts), B = 2, both phases, with and without RoPE: the layer's attention
// output ≤ 1e-5 rel RMS, L_I ≤ 1e-5 relative, and ∂L_I/∂WqI, WkI, WwI ≤ 1e-4 (f32 through
// projection, scores, loss, backward and xᵀ·d; CONVENTIONS' backward bound) — accumulated onto
// existing gradients (micro-batches) in the sparse phase.
import { describe, expect, it } from 'vitest';

import type { DsaConfig, DsaPhase } from '../../src/definitions/dsa-config';
import { createLayoutArena, type PlaceTensor } from '../../src/gpu/arena';
import { dsaBackwardDispatches, dsaForwardDispatches, dsaSavedTensors, dsaScratchTensors } from '../../src/model/dsa/core';
import { indexerParamGradDispatches, indexerProjectDispatches } from '../../src/model/dsa/indexer';
import { dsaLayerAttentionRef } from '../../src/reference/dsa/layer';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a));
const cfg: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 3, warmupSteps: 1, lossWeight: 0.8 };

describe('DSA indexer in a layer on the GPU vs the twin', () => {
  it.each([
    ['warmup', 10000],
    ['sparse', 10000],
    ['sparse', undefined],
  ] as [DsaPhase, number | undefined][])('%s, ropeTheta %s', async (phase, ropeTheta) => {
    const gpu = await getGpu();
    const s = { B: 2, T: 9, H: 4, G: 2, dk: 4, dv: 4 };
    const C = 8;
    const N = s.B * s.T;
    const HI = cfg.indexHeads;
    const dI = cfg.indexDim;
    const r = rng(phase.length * 3 + (ropeTheta ? 1 : 2));
    const x = F(randn(N * C, r));
    const W = { wqI: F(randn(C * HI * dI, r)), wkI: F(randn(C * dI, r)), wwI: F(randn(C * HI, r)) };
    const q = F(randn(N * s.H * s.dk, r));
    const k = F(randn(N * s.G * s.dk, r));
    const v = F(randn(N * s.G * s.dv, r));
    const dout = F(randn(N * s.H * s.dv, r));
    const prior = { wqI: F(randn(W.wqI.length, r)), wkI: F(randn(W.wkI.length, r)), wwI: F(randn(W.wwI.length, r)) };
    const accumulate = phase === 'sparse';
    const layout = (place: PlaceTensor) => ({
      x: place('x', x.length),
      W: { wqI: place('wqI', W.wqI.length), wkI: place('wkI', W.wkI.length), wwI: place('wwI', W.wwI.length) },
      grads: { wqI: place('dwqI', W.wqI.length), wkI: place('dwkI', W.wkI.length), wwI: place('dwwI', W.wwI.length) },
      q: place('q', q.length),
      k: place('k', k.length),
      v: place('v', v.length),
      dout: place('dout', dout.length),
      out: place('out', N * s.H * s.dv),
      lse: place('lse', s.B * s.H * s.T),
      delta: place('delta', s.B * s.H * s.T),
      dq: place('dq', q.length),
      dk: place('dk', k.length),
      dv: place('dv', v.length),
      qI: place('qI', N * HI * dI),
      kI: place('kI', N * dI),
      wI: place('wI', N * HI),
      dqI: place('dqI', N * HI * dI),
      dkI: place('dkI', N * dI),
      dwI: place('dwI', N * HI),
      saved: dsaSavedTensors(place, 'dsa.', s, cfg),
      scratch: dsaScratchTensors(place, 'dsa.', s, cfg),
    });
    const { tensors: t } = createLayoutArena(gpu, 'dsa-layer-test', layout);
    gpu.write(t.x, new Float32Array(x));
    for (const n of ['wqI', 'wkI', 'wwI'] as const) {
      gpu.write(t.W[n], new Float32Array(W[n]));
      // Sparse: earlier micro-batches' gradients to add onto; warm-up: NaN, which must be overwritten.
      gpu.write(t.grads[n], accumulate ? new Float32Array(prior[n]) : new Float32Array(W[n].length).fill(NaN));
    }
    for (const [slice, a] of [
      [t.q, q],
      [t.k, k],
      [t.v, v],
      [t.dout, dout],
    ] as const)
      gpu.write(slice, new Float32Array(a));
    const rows = { N, T: s.T, C, cfg, ropeTheta, x: t.x };
    const io = { q: t.q, k: t.k, v: t.v, out: t.out, lse: t.lse, qI: t.qI, kI: t.kI, wI: t.wI, saved: t.saved };
    const gradScale = cfg.lossWeight / N;
    gpu.run([
      ...(await indexerProjectDispatches(gpu, { ...rows, W: t.W, qI: t.qI, kI: t.kI, wI: t.wI })),
      ...(await dsaForwardDispatches(gpu, cfg, s, phase, io)),
      ...(await dsaBackwardDispatches(gpu, cfg, s, phase, io, t.scratch, {
        gradScale,
        dqI: t.dqI,
        dkI: t.dkI,
        dwI: t.dwI,
        main: { dout: t.dout, delta: t.delta, dq: t.dq, dk: t.dk, dv: t.dv },
      })),
      ...(await indexerParamGradDispatches(gpu, { ...rows, dqI: t.dqI, dkI: t.dkI, dwI: t.dwI, grads: t.grads, accumulate })),
    ]);
    const want = dsaLayerAttentionRef(x, W, q, k, v, { ...s, C, ropeTheta }, cfg, phase);
    expectClose('out', await gpu.readF32(t.out), want.out, 1e-5);
    const kl = await gpu.readF32(t.scratch.klRows, N);
    const loss = gradScale * kl.reduce((a, b) => a + b, 0);
    expect(Math.abs(loss - want.indexLoss) / want.indexLoss, 'L_I').toBeLessThanOrEqual(1e-5);
    for (const [n, g] of [
      ['wqI', want.grads.dwqI],
      ['wkI', want.grads.dwkI],
      ['wwI', want.grads.dwwI],
    ] as const) {
      const expected = accumulate ? g.map((e, i) => e + prior[n][i]) : g;
      expectClose(`d${n}`, await gpu.readF32(t.grads[n]), expected, 1e-4);
    }
  });
});
