// GPU prefill vs CPU decode: the ModelPlan's eval forward (f32, whole sequences at once) against
// the float64 KV-cache decoder fed one token at a time. The plan overwrites its logits with
// dlogits in place, so the comparison is on the per-position cross-entropy ('losses') for given
// targets: rel ≤ 1e-4 at every position (f32 through 2 layers; what is seen is ~1e-6).
// The NSA case also requires the GPU's selections to equal the decoder's; with these seeds no
// group score is near-tied (f32 and f64 could otherwise order a near-tie differently).
import { describe, expect, it } from 'vitest';
import { GpuContext } from '../../src/gpu/context';
import { act } from '../../src/model/activations';
import type { ModelConfig } from '../../src/spec/model-config';
import { ModelDecoder } from '../../src/reference/decoder';
import { initParams } from '../../src/model/init';
import { paramSpecs } from '../../src/spec/params';
import { ModelPlan } from '../../src/model/plan';
import { crossEntropyRef } from '../../src/reference/crossentropy';
import { getGpu } from '../helpers/gpu';
import { randomTokens } from './helpers';

const TOL = 1e-4;
// Small models with odd sizes (dk ≠ dv, vocab and dims not multiples of 4), the shapes of
// tests/model/one-step*.test.ts so that a full run compiles their pipelines once; weights large
// enough that attention is far from uniform. NSA: T = 35 > nSel·lSel, so the selection is sparse.
const dense: ModelConfig = {
  vocabSize: 37, dim: 24, nLayers: 2, nHeads: 4, nKvGroups: 2, dk: 6, dv: 5, ffnHidden: 20,
  seqLen: 21, ropeTheta: 10000, normEps: 1e-5, attention: 'dense', initStd: 0.3,
};
const nsa: ModelConfig = {
  vocabSize: 29, dim: 16, nLayers: 2, nHeads: 4, nKvGroups: 2, dk: 6, dv: 5, ffnHidden: 12,
  seqLen: 35, ropeTheta: 10000, normEps: 1e-5, attention: 'nsa', initStd: 0.3,
  nsa: { l: 4, d: 2, lSel: 8, nSel: 2, w: 5, phi: 'avg', forceInit: true, forceLocal: 1, sharedKV: false, gates: { kind: 'none' } },
};

describe('GPU prefill (ModelPlan eval forward) = CPU decode, per-position losses rel ≤ 1e-4 (and equal NSA selections)', () => {
  it.each([['dense', dense], ['nsa', nsa]] as const)('%s model, B = 2', async (_n, c) => {
    const gpu = await getGpu();
    const B = 2;
    const T = c.seqLen;
    const N = B * T;
    const plan = await ModelPlan.build(gpu, c, B, 1, { gradClip: 0, weightDecay: 0 });
    const params = initParams(paramSpecs(c), 9);
    plan.uploadParams(params);
    const tokens = randomTokens(N, c.vocabSize, 10);
    const targets = randomTokens(N, c.vocabSize, 11);
    gpu.write(plan.acts.get(act.tokens(0)), Int32Array.from(tokens));
    gpu.write(plan.acts.get(act.targets(0)), Int32Array.from(targets));
    const enc = gpu.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    GpuContext.encode(pass, plan.evalForward);
    pass.end();
    gpu.submit([enc.finish()]);
    const losses = await gpu.readF32(plan.acts.get('losses'), N);
    const gpuSel: Int32Array[] = [];
    if (c.attention === 'nsa' && c.nsa) for (let l = 0; l < c.nLayers; l++) gpuSel.push(await gpu.readI32(plan.acts.get(act.layer(l, 'nsa.sel')), N * c.nKvGroups * c.nsa.nSel));
    for (const b of plan.acts.buffers) b.destroy();

    let worst = 0;
    for (let b = 0; b < B; b++) {
      const dec = new ModelDecoder(c, params);
      for (let t = 0; t < T; t++) {
        const n = b * T + t;
        const st = dec.step(tokens[n]);
        const want = crossEntropyRef(st.logits, [targets[n]], 1, c.vocabSize).losses[0];
        const e = Math.abs(losses[n] - want) / Math.abs(want);
        worst = Math.max(worst, e);
        expect(e, `b=${b} t=${t}: GPU ${losses[n]} vs decode ${want}`).toBeLessThanOrEqual(TOL);
        for (const L of st.nsa) {
          const w = c.nKvGroups * c.nsa!.nSel;
          expect(Array.from(L.selection), `selection layer ${L.layer} b=${b} t=${t}`).toEqual(Array.from(gpuSel[L.layer].subarray(n * w, (n + 1) * w)));
        }
      }
    }
    console.log(`${_n}: GPU prefill vs CPU decode, worst per-position loss rel ${worst.toExponential(2)}`);
    expect(gpu.reports).toEqual([]);
  });
});
