// The window and MoBA models (docs/nsa-spec.md section 15) on the GPU: one forward+backward against
// the float64 twin — the loss (rel ≤ 1e-5) and every parameter gradient (rel RMS ≤ 1e-4, f32 vs
// f64 as CONVENTIONS states), MoBA's GPU selection equal to the twin's own — in both branch kernel
// variants; the step runs only the kernels the mechanism uses (a window model no compression and
// no selection; MoBA no compressed or window branch and no gates); and the keys each query read,
// counted in the kernels, equal the section 15 formulas (window min(w, t + 1); MoBA the selected
// blocks' positions ≤ t).
import { describe, expect, it } from 'vitest';

import { mobaAsNsa, type MobaConfig, mobaReads, windowAsNsa, windowReads } from '../../src/definitions/mechanisms';
import type { ModelConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnShape, NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import type { MobaForward } from '../../src/reference/mechanisms';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel, NO_OPTIMIZER } from '../helpers/models';
import { randomBranchInputs, runBranch } from '../nsa-gpu/attention-harness';

const B = 2;
const MOBA: MobaConfig = { blockSize: 4, topK: 3 };
const CONFIGS: Array<[string, ModelConfig]> = [
  ['window w = 5', denseTestModel(13, { attention: 'window', window: { w: 5 } })],
  ['moba B = 4, k = 3', denseTestModel(19, { attention: 'moba', moba: MOBA })],
];
const CASES = (['group', 'simple'] as const).flatMap((k) => CONFIGS.map(([name, c]) => [k, name, c] as const));

async function oneStep(cfg: ModelConfig, nsaKernels: NsaAttnVariant) {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER, nsaKernels });
  const labels = plan.stepDispatches().map((d) => d.label);
  const params = initParams(paramSpecs(cfg), 7);
  plan.importParams(params);
  const r = rng(107);
  const N = B * cfg.seqLen;
  const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
  const loss = await plan.forwardBackward();
  const grads = await plan.exportGrads();
  const selections: Int32Array[] = [];
  if (cfg.attention === 'moba') for (let l = 0; l < cfg.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
  plan.destroy();
  const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
  const fwd = modelForwardRef(cfg, p64, tokens, targets, B);
  const g64 = modelBackwardRef(cfg, p64, tokens, targets, B, fwd);
  return { loss, grads, fwd, g64, labels, selections };
}

describe('window and MoBA models, one training step: GPU vs float64 twin', { timeout: 300_000 }, () => {
  it.each(CASES)('%s kernels, %s: loss (rel ≤ 1e-5), every gradient (rel RMS ≤ 1e-4), selection = twin', async (kernels, _n, cfg) => {
    const { loss, grads, fwd, g64, labels, selections } = await oneStep(cfg, kernels);
    // Only the mechanism's kernels run.
    const used = (re: RegExp) => labels.filter((l) => re.test(l)).length;
    expect(used(/^nsa\.cmp\./), 'no compressed branch').toBe(0);
    expect(used(/^nsa_gates|gate/), 'no gates').toBe(0);
    if (cfg.attention === 'window') {
      expect(used(/^nsa_compress|^nsa_select|^nsa\.sel\.|reverseIndex/), 'no compression or selection').toBe(0);
      expect(used(/^nsa\.win\.forward$/)).toBe(cfg.nLayers);
    } else {
      expect(used(/^nsa\.win\./), 'no window branch').toBe(0);
      expect(used(/^nsa_compress\.avgForward$/), 'the keys’ block means only').toBe(cfg.nLayers);
      expect(used(/^nsa_compress\.avgBackward$/), 'no gradient through the means').toBe(0);
      expect(used(/^nsa\.sel\.forward$/)).toBe(cfg.nLayers);
    }
    expect(Math.abs(loss - fwd.loss) / fwd.loss).toBeLessThanOrEqual(1e-5);
    const errors: Record<string, number> = {};
    for (const s of paramSpecs(cfg)) errors[s.name] = relRms(grads.get(s.name)!, g64.get(s.name)!);
    const worst = Math.max(...Object.values(errors));
    expect(worst, JSON.stringify(errors)).toBeLessThanOrEqual(1e-4);
    console.log(
      `${kernels} ${_n}: loss rel ${(Math.abs(loss - fwd.loss) / fwd.loss).toExponential(2)}, worst gradient rel RMS ${worst.toExponential(2)}`,
    );
    if (cfg.attention === 'moba') {
      // The twin computed its own selection (not frozen to the GPU's): they agree exactly at this init scale.
      fwd.layers.forEach((L, l) =>
        expect([...selections[l]], `layer ${l} selection`).toEqual(L.attnCache.mech!.flatMap((f) => [...(f as MobaForward).selection])),
      );
      expect(selections[0].some((j) => j === -1) && selections[0].some((j) => j >= 2)).toBe(true);
    }
  });
});

describe('keys read per (b, t, g), counted in the kernels, = the section 15 formulas', () => {
  const s: NsaAttnShape = { B: 2, T: 23, H: 4, G: 2, dk: 6, dv: 5 };
  it.each(['group', 'simple'] as const)('%s: window min(w, t + 1); MoBA Σ min(B, t + 1 − j·B) over its blocks', async (variant) => {
    const gpu = await getGpu();
    const win = windowAsNsa({ w: 6 });
    const [w] = await runBranch(gpu, s, win, 'win', randomBranchInputs(s, win, 'win', 3), { count: true, variant });
    const moba = mobaAsNsa(MOBA);
    const x = randomBranchInputs(s, moba, 'sel', 4);
    const [m] = await runBranch(gpu, s, moba, 'sel', x, { count: true, variant });
    for (let b = 0; b < s.B; b++)
      for (let t = 0; t < s.T; t++)
        for (let g = 0; g < s.G; g++) {
          const i = (b * s.T + t) * s.G + g;
          expect(w.keysRead[i], `window b${b} t${t} g${g}`).toBe(windowReads(t, { w: 6 }));
          expect(m.keysRead[i], `moba b${b} t${t} g${g}`).toBe(mobaReads(t, x.sel.subarray(i * MOBA.topK, (i + 1) * MOBA.topK), MOBA));
        }
  });
});
