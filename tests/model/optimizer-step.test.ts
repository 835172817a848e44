// One whole optimizer step of the model plan (gradient norm, clip, AdamW) against float64: the plan
// runs the gradient norm over each buffer's run of gradients and AdamW over each run of tensors with
// one weight-decay flag (paramRuns), padding included; the parameters and moments after the step
// must equal AdamW applied tensor by tensor with its own decay flag to the gradients of the same
// batch, clipped by the float64 norm of all of them.
import { describe, expect, it } from 'vitest';

import type { OptimizerSettings } from '../../src/definitions/optimizer';
import { numel, paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel } from '../helpers/models';

const B = 2;
const LR = 0.01;
// A clip well under the gradient norm, so the clip scale is exercised; weight decay large enough
// that applying it to a tensor that must not decay (norms, biases) moves it far past the tolerance.
const OPT: OptimizerSettings = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.5, gradClip: 0.05 };

describe('model plan, one optimizer step: GPU vs float64 AdamW', () => {
  it('gradient norm (rel ≤ 1e-5), parameters (rel RMS ≤ 1e-6) and moments (rel RMS ≤ 1e-5) of every tensor', async () => {
    const gpu = await getGpu();
    const cfg = denseTestModel(9, { initStd: 0.2 });
    const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: OPT });
    const specs = paramSpecs(cfg);
    expect(new Set(specs.map((s) => s.decay))).toEqual(new Set([true, false]));
    const params = initParams(specs, 11);
    plan.importParams(params);
    const r = rng(5);
    const N = B * cfg.seqLen;
    const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
    plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
    // The step's gradients: the same forward + backward, deterministic.
    await plan.forwardBackward();
    const grads = await plan.exportGrads();

    const readback = gpu.device.createBuffer({ size: plan.readbackBytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
    const enc = gpu.device.createCommandEncoder();
    plan.encodeTrainStep(enc, LR, 1);
    plan.encodeStepReadback(enc, readback);
    gpu.submit([enc.finish()]);
    const scalars = plan.decodeStepReadback(await gpu.read({ buffer: readback, offset: 0, size: plan.readbackBytes }));
    readback.destroy();

    let sq = 0;
    for (const g of grads.values()) for (const x of g) sq += x * x;
    const norm = Math.sqrt(sq);
    expect(Math.abs(scalars.gradNorm - norm) / norm).toBeLessThanOrEqual(1e-5);
    const scale = OPT.gradClip / (norm + 1e-6);
    expect(norm).toBeGreaterThan(OPT.gradClip);
    expect(Math.abs(scalars.clipScale - scale) / scale).toBeLessThanOrEqual(1e-5);

    const after = await plan.exportParams();
    const { m, v } = await plan.exportOptimizerState();
    const bc1 = 1 - OPT.beta1;
    const bc2 = 1 - OPT.beta2;
    for (const s of specs) {
      const n = numel(s.shape);
      const p0 = params.get(s.name)!;
      const g = grads.get(s.name)!;
      const pRef = new Float64Array(n);
      const mRef = new Float64Array(n);
      const vRef = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const gi = g[i] * scale;
        mRef[i] = (1 - OPT.beta1) * gi;
        vRef[i] = (1 - OPT.beta2) * gi * gi;
        const p = s.decay ? p0[i] * (1 - LR * OPT.weightDecay) : p0[i];
        pRef[i] = p - ((LR / bc1) * mRef[i]) / (Math.sqrt(vRef[i]) / Math.sqrt(bc2) + OPT.eps);
      }
      expect(relRms(after.get(s.name)!, pRef), `${s.name} (decay ${s.decay})`).toBeLessThanOrEqual(1e-6);
      expect(relRms(m.get(s.name)!, mRef), `${s.name} m`).toBeLessThanOrEqual(1e-5);
      expect(relRms(v.get(s.name)!, vRef), `${s.name} v`).toBeLessThanOrEqual(1e-5);
    }
    expect(gpu.reports).toEqual([]);
    plan.destroy();
  });
});
