// One full forward+backward of a small dense model on the GPU against the float64 reference:
// the loss and every parameter gradient.
import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { numel, paramSpecs } from '../../src/definitions/params';
import { scoredTargets } from '../../src/definitions/targets';
import { IGNORE_TARGET } from '../../src/definitions/targets';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel, NO_OPTIMIZER } from '../helpers/models';

// Odd sizes on purpose: dk ≠ dv, T not a power of two, vocab not a multiple of any tile.
const cfg: ModelConfig = denseTestModel(9, { initStd: 0.2 });
const B = 2;

interface MicroBatch {
  tokens: Int32Array;
  targets: Int32Array;
}

/**
 * Builds a plan with one micro-batch per entry, runs one forward+backward and checks the loss
 * (rel ≤ 1e-5) and every gradient (rel RMS ≤ 1e-4) against the mean of the f64 reference's.
 */
async function expectAccumulatedStep(micro: MicroBatch[], paramSeed: number, scoredPerSequence?: number): Promise<void> {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, cfg, {
    batchSize: B,
    gradAccum: micro.length,
    optimizer: NO_OPTIMIZER,
    scoredPerSequence: scoredPerSequence,
  });
  const specs = paramSpecs(cfg);
  const params = initParams(specs, paramSeed);
  plan.importParams(params);
  const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
  const N = B * cfg.seqLen;
  const expected = new Map(specs.map((s) => [s.name, new Float64Array(numel(s.shape))]));
  let expectedLoss = 0;
  micro.forEach(({ tokens, targets }, m) => {
    plan.writeBatch(m, tokens, targets, new Int32Array(tokenIndexLength(N)));
    const fwd = modelForwardRef(cfg, p64, tokens, targets, B);
    expectedLoss += fwd.loss / micro.length;
    for (const [k, v] of modelBackwardRef(cfg, p64, tokens, targets, B, fwd)) {
      const e = expected.get(k)!;
      for (let i = 0; i < v.length; i++) e[i] += v[i] / micro.length;
    }
  });
  const loss = await plan.forwardBackward();
  expect(Math.abs(loss - expectedLoss) / expectedLoss).toBeLessThanOrEqual(1e-5);
  const grads = await plan.exportGrads();
  for (const s of specs) expect(relRms(grads.get(s.name)!, expected.get(s.name)!), s.name).toBeLessThanOrEqual(1e-4);
  expect(gpu.reports).toEqual([]);
}

const randomTokens = (r: () => number) => Int32Array.from({ length: B * cfg.seqLen }, () => Math.floor(r() * cfg.vocabSize));

describe('dense model, one training step: GPU vs float64 reference', () => {
  it('loss (rel ≤ 1e-5) and every parameter gradient (rel RMS ≤ 1e-4)', async () => {
    const gpu = await getGpu();
    const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER });
    const specs = paramSpecs(cfg);
    const params = initParams(specs, 7);
    plan.importParams(params);
    const r = rng(3);
    const N = B * cfg.seqLen;
    const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
    const loss = await plan.forwardBackward();
    const grads = await plan.exportGrads();

    const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
    const fwd = modelForwardRef(cfg, p64, tokens, targets, B);
    const g64 = modelBackwardRef(cfg, p64, tokens, targets, B, fwd);
    expect(Math.abs(loss - fwd.loss) / fwd.loss).toBeLessThanOrEqual(1e-5);
    const errors: Record<string, number> = {};
    for (const s of specs) {
      const e = relRms(grads.get(s.name)!, g64.get(s.name)!);
      errors[s.name] = e;
      expect(grads.get(s.name)!.length).toBe(numel(s.shape));
    }
    const worst = Math.max(...Object.values(errors));
    expect(worst, JSON.stringify(errors)).toBeLessThanOrEqual(1e-4);
    expect(gpu.reports).toEqual([]);
  });

  it('gradient accumulation over 2 micro-batches = mean of their reference gradients (rel RMS ≤ 1e-4)', async () => {
    const r = rng(4);
    await expectAccumulatedStep(
      [0, 1].map(() => ({ tokens: randomTokens(r), targets: randomTokens(r) })),
      8,
    );
  });

  it('only some targets scored (IGNORE_TARGET elsewhere, 3 per sequence, 2 micro-batches): loss and gradients = reference mean over the scored ones', async () => {
    const scored = 3;
    const r = rng(6);
    const micro = [0, 1].map((m) => {
      // Scored positions differ per micro-batch and row; the plan only relies on their count.
      const targets = new Int32Array(B * cfg.seqLen).fill(IGNORE_TARGET);
      for (let b = 0; b < B; b++)
        for (let i = 0; i < scored; i++) targets[b * cfg.seqLen + ((b + m + 3 * i) % cfg.seqLen)] = Math.floor(r() * cfg.vocabSize);
      expect(scoredTargets(targets)).toBe(B * scored);
      return { tokens: randomTokens(r), targets };
    });
    await expectAccumulatedStep(micro, 9, scored);
    const gpu = await getGpu();
    await expect(ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER, scoredPerSequence: 0 })).rejects.toThrow(
      /scoredPerSequence must be an integer in \[1, seqLen = 9\] \(got 0\)/,
    );
  });

  it('the float64 reference gradient matches central finite differences (rel ≤ 1e-6)', () => {
    const small: ModelConfig = { ...cfg, nLayers: 1, seqLen: 5, vocabSize: 11, dim: 8, ffnHidden: 6, dk: 4, dv: 3 };
    const specs = paramSpecs(small);
    const p64 = new Map([...initParams(specs, 11)].map(([k, v]) => [k, Float64Array.from(v)]));
    const r = rng(5);
    const N = 2 * small.seqLen;
    const tokens = Array.from({ length: N }, () => Math.floor(r() * small.vocabSize));
    const targets = Array.from({ length: N }, () => Math.floor(r() * small.vocabSize));
    const g = modelBackwardRef(small, p64, tokens, targets, 2, modelForwardRef(small, p64, tokens, targets, 2));
    const h = 1e-5;
    for (const s of specs) {
      const w = p64.get(s.name)!;
      // A few coordinates per tensor keep this fast; every tensor is covered.
      for (const i of [0, Math.floor(w.length / 2), w.length - 1]) {
        const old = w[i];
        w[i] = old + h;
        const lp = modelForwardRef(small, p64, tokens, targets, 2).loss;
        w[i] = old - h;
        const lm = modelForwardRef(small, p64, tokens, targets, 2).loss;
        w[i] = old;
        const fd = (lp - lm) / (2 * h);
        const an = g.get(s.name)![i];
        expect(Math.abs(fd - an), `${s.name}[${i}] fd ${fd} vs ${an}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(fd)) + 1e-9);
      }
    }
  });
});
