// The key rows an NSA model's training step read, as its forward kernels counted them and its
// per-step statistics summed them (shaders/nsa_stats.wgsl), against a count in this file from the
// spec alone (docs/nsa-spec.md section 10): per query t and group, the compressed blocks whose last
// position is ≤ t, the positions ≤ t of the blocks the step selected (read back), and min(w, t + 1).
// Exact integers, every layer, both kernel variants; a selection that depends on the scores
// (nothing forced) as well as the default forced blocks.
import { describe, expect, it } from 'vitest';

import type { ModelConfig, ModelNsaConfig } from '../../src/definitions/model-config';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { NO_OPTIMIZER, nsaTestModel } from '../helpers/models';

const B = 2;

/** Σ over (b, t, g) of the rows each branch reads, from the config and the selection [B, T, G, nSel]. */
function expectedReads(c: ModelConfig, sel: Int32Array): [number, number, number] {
  const n = c.nsa!;
  const T = c.seqLen;
  const G = c.nKvGroups;
  let cmp = 0;
  let chosen = 0;
  let win = 0;
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let g = 0; g < G; g++) {
        // Compressed block i covers positions i·d … i·d + l − 1: visible once it is complete.
        for (let i = 0; i * n.d + n.l - 1 <= t; i++) cmp++;
        const row = ((b * T + t) * G + g) * n.nSel;
        for (let m = 0; m < n.nSel; m++) {
          const j = sel[row + m];
          for (let s = j * n.lSel; j >= 0 && s < (j + 1) * n.lSel; s++) if (s <= t) chosen++;
        }
        win += Math.min(n.w, t + 1);
      }
  return [cmp, chosen, win];
}

async function stepReads(cfg: ModelConfig, nsaKernels: NsaAttnVariant) {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER, nsaKernels });
  plan.importParams(initParams(plan.specs, 3));
  const r = rng(17);
  const N = B * cfg.seqLen;
  const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  plan.writeBatch(0, tokens, tokens, new Int32Array(tokenIndexLength(N)));
  await plan.forwardBackward();
  const staging = gpu.device.createBuffer({ size: plan.readbackBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = gpu.device.createCommandEncoder();
  plan.encodeStepReadback(enc, staging);
  gpu.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const stats = plan.decodeStepReadback(staging.getMappedRange().slice(0)).nsa!;
  staging.destroy();
  const selections: Int32Array[] = [];
  for (let l = 0; l < cfg.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
  plan.destroy();
  return { stats, selections };
}

const configs: Array<[string, number, Partial<ModelNsaConfig>]> = [
  ['forced init and local blocks, T = 37 (partial blocks)', 37, {}],
  ['nothing forced, nSel 3: the selection decides which blocks, partial or not', 45, { forceInit: false, forceLocal: 0, nSel: 3 }],
  ['a window longer than the sequence, d = l (no overlap)', 23, { w: 40, d: 4 }],
];
const cases = (['group', 'simple'] as const).flatMap((k) => configs.map(([name, T, over]) => [k, name, T, over] as const));

describe('NSA keys read per step, counted by the forward kernels', { timeout: 120_000 }, () => {
  it.each(cases)('%s kernels, %s: every layer, every branch exact', async (kernels, _name, T, over) => {
    const cfg = nsaTestModel(T, {}, over);
    const { stats, selections } = await stepReads(cfg, kernels);
    expect(stats).toHaveLength(cfg.nLayers);
    const rows = B * T * cfg.nKvGroups;
    stats.forEach((s, l) => {
      const want = expectedReads(cfg, selections[l]);
      expect(s.keysRead, `layer ${l}`).toEqual(want);
      expect(s.keysPerQuery).toEqual(want.map((k) => k / rows));
      expect(s.invalid).toBe(0);
    });
    // The selected branch's count follows the selection: with nothing forced the two layers differ.
    if (over.forceLocal === 0) expect(selections[0]).not.toEqual(selections[1]);
  });
});
