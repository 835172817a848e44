// GPU prefill vs CPU decode: the ModelPlan's eval forward (f32, whole sequences at once) against
// the float64 KV-cache decoder fed one token at a time. The plan overwrites its logits with
// dlogits in place, so the comparison is on the per-position cross-entropy ('losses') for given
// targets: rel ≤ 1e-4 at every position (f32 through 2 layers; what is seen is ~1e-6).
// The NSA case also requires the GPU's selections to equal the decoder's; with these seeds no
// group score is near-tied (f32 and f64 could otherwise order a near-tie differently).
import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { crossEntropyRef } from '../../src/reference/crossentropy';
import { ModelDecoder } from '../../src/reference/decoder';
import { getGpu } from '../helpers/gpu';
import { denseTestModel, NO_OPTIMIZER, nsaTestModel } from '../helpers/models';
import { randomTokens } from './helpers';

const TOL = 1e-4;
// Small models with odd sizes (dk ≠ dv, vocab and dims not multiples of 4), the shapes of
// tests/model/one-step*.test.ts so that a full run compiles their pipelines once; weights large
// enough that attention is far from uniform. NSA: T = 35 > nSel·lSel, so the selection is sparse.
const dense: ModelConfig = denseTestModel(21);
const nsa: ModelConfig = nsaTestModel(35);

describe('GPU prefill (ModelPlan eval forward) = CPU decode, per-position losses rel ≤ 1e-4 (and equal NSA selections)', () => {
  it.each([
    ['dense', dense],
    ['nsa', nsa],
  ] as const)('%s model, B = 2', async (_n, c) => {
    const gpu = await getGpu();
    const B = 2;
    const T = c.seqLen;
    const N = B * T;
    const plan = await ModelPlan.build(gpu, c, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER });
    const params = initParams(paramSpecs(c), 9);
    plan.importParams(params);
    const tokens = randomTokens(N, c.vocabSize, 10);
    const targets = randomTokens(N, c.vocabSize, 11);
    plan.writeBatch(0, Int32Array.from(tokens), Int32Array.from(targets), new Int32Array(tokenIndexLength(N)));
    const enc = gpu.device.createCommandEncoder();
    plan.encodeEval(enc);
    gpu.submit([enc.finish()]);
    const losses = await plan.readLosses();
    const gpuSel: Int32Array[] = [];
    if (c.attention === 'nsa' && c.nsa) for (let l = 0; l < c.nLayers; l++) gpuSel.push((await plan.readSelection(l, N)).sel);
    plan.destroy();

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
          expect(Array.from(L.selection), `selection layer ${L.layer} b=${b} t=${t}`).toEqual(
            Array.from(gpuSel[L.layer].subarray(n * w, (n + 1) * w)),
          );
        }
      }
    }
    console.log(`${_n}: GPU prefill vs CPU decode, worst per-position loss rel ${worst.toExponential(2)}`);
    expect(gpu.reports).toEqual([]);
  });
});
