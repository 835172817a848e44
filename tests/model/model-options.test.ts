// The recall options of the model (docs/nsa-spec.md 3.1) in a whole training step: attention-only
// layers (ffnHidden 0), no positional encoding, and the key convolution, for dense attention and
// NSA (per-branch and shared K/V, both branch kernel variants). Each step on the GPU against the
// float64 reference: the loss (rel ≤ 1e-5) and every parameter gradient (rel RMS ≤ 1e-4), the
// convolution taps included; the reference's own gradient against central finite differences with
// every option on; and the options really change the model (none is silently ignored).
import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { numel, paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel, NO_OPTIMIZER, nsaTestModel } from '../helpers/models';

const B = 2;

const CASES: Array<[string, ModelConfig, NsaAttnVariant | undefined]> = [
  [
    'dense, attention-only, no positional encoding, conv 3',
    denseTestModel(9, { initStd: 0.2, ffnHidden: 0, posEncoding: 'none', shortConv: 3 }),
    undefined,
  ],
  ['dense, MLP, RoPE, conv 2', denseTestModel(9, { initStd: 0.2, shortConv: 2 }), undefined],
  ['NSA per-branch K/V, attention-only, RoPE, conv 3 (group kernels)', nsaTestModel(19, { ffnHidden: 0, shortConv: 3 }), 'group'],
  [
    'NSA shared K/V, no positional encoding, conv 4 (simple kernels)',
    nsaTestModel(19, { posEncoding: 'none', shortConv: 4 }, { sharedKV: true }),
    'simple',
  ],
];

/** Random weights, the convolutions too (their identity initialisation would hide a transposed tap). */
function randomParams(c: ModelConfig, seed: number): Map<string, Float32Array> {
  const params = initParams(paramSpecs(c), seed);
  const r = rng(seed + 1);
  for (const [name, v] of params) if (name.includes('k_conv')) for (let i = 0; i < v.length; i++) v[i] = (r() - 0.5) * 1.2;
  return params;
}

describe('model options, one training step: GPU vs float64 reference', { timeout: 400_000 }, () => {
  it.each(CASES)('%s: loss (rel ≤ 1e-5) and every gradient (rel RMS ≤ 1e-4)', async (_name, cfg, nsaKernels) => {
    const gpu = await getGpu();
    const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER, nsaKernels });
    const specs = paramSpecs(cfg);
    // The options shape the parameters: no MLP tensors without an MLP, one convolution per K projection.
    expect(specs.some((s) => s.name.endsWith('.w1'))).toBe(cfg.ffnHidden > 0);
    const convs = specs.filter((s) => s.name.includes('k_conv'));
    const kvSets = cfg.attention === 'nsa' && !cfg.nsa!.sharedKV ? 3 : 1;
    expect(convs.length).toBe(cfg.nLayers * kvSets);
    for (const s of convs) expect(s.shape).toEqual([cfg.nKvGroups * cfg.dk, 1, cfg.shortConv]);
    const params = randomParams(cfg, 7);
    plan.importParams(params);
    const r = rng(8);
    const N = B * cfg.seqLen;
    const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
    const loss = await plan.forwardBackward();
    const grads = await plan.exportGrads();
    const selections: Int32Array[] = [];
    if (cfg.attention === 'nsa') for (let l = 0; l < cfg.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
    plan.destroy();
    const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
    const fwd = modelForwardRef(cfg, p64, tokens, targets, B, cfg.attention === 'nsa' ? { selections } : {});
    const g64 = modelBackwardRef(cfg, p64, tokens, targets, B, fwd);
    expect(Math.abs(loss - fwd.loss) / fwd.loss).toBeLessThanOrEqual(1e-5);
    const errors = Object.fromEntries(specs.map((s) => [s.name, relRms(grads.get(s.name)!, g64.get(s.name)!)]));
    expect(Math.max(...Object.values(errors)), JSON.stringify(errors)).toBeLessThanOrEqual(1e-4);
    for (const s of convs) expect(Math.hypot(...g64.get(s.name)!), `${s.name} gradient`).toBeGreaterThan(0);
    expect(gpu.reports).toEqual([]);
  });

  it('each option changes the loss: none is silently ignored (float64 reference)', () => {
    const base = denseTestModel(9, { initStd: 0.2, shortConv: 3 });
    const r = rng(9);
    const N = B * base.seqLen;
    const tokens = Array.from({ length: N }, () => Math.floor(r() * base.vocabSize));
    const targets = Array.from({ length: N }, () => Math.floor(r() * base.vocabSize));
    const loss = (c: ModelConfig) => {
      const p = randomParams(c, 3);
      return modelForwardRef(c, new Map([...p].map(([k, v]) => [k, Float64Array.from(v)])), tokens, targets, B).loss;
    };
    const l0 = loss(base);
    expect(loss({ ...base, posEncoding: 'none' })).not.toBe(l0);
    expect(loss({ ...base, shortConv: 0 })).not.toBe(l0);
    // Identity taps: the convolution passes each key through, so the model is the one without it.
    const identity = initParams(paramSpecs(base), 3);
    const without = initParams(paramSpecs({ ...base, shortConv: 0 }), 3);
    const f64 = (m: Map<string, Float32Array>) => new Map([...m].map(([k, v]) => [k, Float64Array.from(v)]));
    expect(modelForwardRef(base, f64(identity), tokens, targets, B).loss).toBe(
      modelForwardRef({ ...base, shortConv: 0 }, f64(without), tokens, targets, B).loss,
    );
  });

  it('the float64 reference gradient with every option on matches central finite differences (rel ≤ 1e-6)', () => {
    const small = nsaTestModel(
      9,
      { nLayers: 1, vocabSize: 11, dim: 8, ffnHidden: 0, posEncoding: 'none', shortConv: 3 },
      { lSel: 4, w: 3 },
    );
    const specs = paramSpecs(small);
    const p64 = new Map([...randomParams(small, 11)].map(([k, v]) => [k, Float64Array.from(v)]));
    const r = rng(5);
    const N = 2 * small.seqLen;
    const tokens = Array.from({ length: N }, () => Math.floor(r() * small.vocabSize));
    const targets = Array.from({ length: N }, () => Math.floor(r() * small.vocabSize));
    const fwd0 = modelForwardRef(small, p64, tokens, targets, 2);
    // The selection is frozen at the unperturbed one: a discrete choice has no gradient.
    const selections = fwd0.layers.map((L) => Int32Array.from(L.attnCache.nsa!.flatMap((s) => [...s.fwd.selection])));
    const g = modelBackwardRef(small, p64, tokens, targets, 2, fwd0);
    const h = 1e-5;
    for (const s of specs) {
      const w = p64.get(s.name)!;
      expect(w.length).toBe(numel(s.shape));
      for (const i of [0, Math.floor(w.length / 2), w.length - 1]) {
        const old = w[i];
        w[i] = old + h;
        const lp = modelForwardRef(small, p64, tokens, targets, 2, { selections }).loss;
        w[i] = old - h;
        const lm = modelForwardRef(small, p64, tokens, targets, 2, { selections }).loss;
        w[i] = old;
        const fd = (lp - lm) / (2 * h);
        const an = g.get(s.name)![i];
        expect(Math.abs(an - fd), `${s.name}[${i}]: analytic ${an}, finite difference ${fd}`).toBeLessThanOrEqual(
          1e-6 * Math.max(1, Math.abs(fd)),
        );
      }
    }
  });
});
