// One full forward+backward of a small NSA model on the GPU against the float64 reference: the
// loss and every parameter gradient (φ = avg and mlp, per-branch and shared K/V, an ablation).
// The reference runs with the GPU's selection frozen (selection is not differentiable and f32
// vs f64 may order near-tied scores differently); a separate check requires the selections to
// agree wherever the reference's scores are not near-tied. Each case runs both branch kernel
// variants: 'group' (what GPUs run) and 'simple' (what software adapters run), whatever the adapter.
import { describe, expect, it } from 'vitest';

import type { ModelConfig, ModelNsaConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { NO_OPTIMIZER, nsaTestModel } from '../helpers/models';

const base: ModelConfig = nsaTestModel(19);
const nsaBase = base.nsa!;
const B = 2;

async function oneStep(cfg: ModelConfig, seed: number, nsaKernels: NsaAttnVariant) {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER, nsaKernels });
  const specs = paramSpecs(cfg);
  const params = initParams(specs, seed);
  plan.importParams(params);
  const r = rng(seed + 100);
  const N = B * cfg.seqLen;
  const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  // The variant asked for is the one encoded: the group variant runs sel on a (t, g, b) grid and
  // cmp, win query-tiled (64 rows of one (b, g) a workgroup); simple runs one invocation per row.
  const forwardGrids = plan
    .stepDispatches()
    .filter((d) => /^nsa\.(cmp|sel|win)\.forward$/.test(d.label))
    .map((d) => [d.label.split('.')[1], d.workgroups.join(',')]);
  expect(forwardGrids).toHaveLength(3 * cfg.nLayers);
  const hpg = cfg.nHeads / cfg.nKvGroups;
  const groupGrid = (branch: string) =>
    (branch === 'sel' ? [cfg.seqLen, cfg.nKvGroups, B] : [Math.ceil((cfg.seqLen * hpg) / 64), cfg.nKvGroups, B]).join(',');
  for (const [branch, g] of forwardGrids)
    expect(g === groupGrid(branch), `${nsaKernels} ${branch} forward grid ${g}`).toBe(nsaKernels === 'group');
  plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
  const loss = await plan.forwardBackward();
  const grads = await plan.exportGrads();
  const selections: Int32Array[] = [];
  for (let l = 0; l < cfg.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
  const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
  const fwd = modelForwardRef(cfg, p64, tokens, targets, B, { selections });
  const g64 = modelBackwardRef(cfg, p64, tokens, targets, B, fwd);
  const free = modelForwardRef(cfg, p64, tokens, targets, B);
  plan.destroy();
  return { loss, grads, fwd, g64, specs, selections, free };
}

const configs: Array<[string, Partial<ModelNsaConfig>]> = [
  ['φ=avg, per-branch K/V', {}],
  ['φ=mlp, shared K/V', { phi: 'mlp', sharedKV: true }],
  ['force window-only ablation', { gates: { kind: 'force', branch: 'win' } }],
];
const cases = (['group', 'simple'] as const).flatMap((k) => configs.map(([name, over]) => [k, name, over] as const));

describe('NSA model, one training step: GPU vs float64 reference', { timeout: 400_000 }, () => {
  it.each(cases)('%s kernels, %s: loss (rel ≤ 1e-5) and every parameter gradient (rel RMS ≤ 1e-4)', async (kernels, _name, over) => {
    const cfg: ModelConfig = { ...base, nsa: { ...nsaBase, ...over } };
    const { loss, grads, fwd, g64, specs, selections, free } = await oneStep(cfg, 7, kernels);
    expect(Math.abs(loss - fwd.loss) / fwd.loss).toBeLessThanOrEqual(1e-5);
    const errors: Record<string, number> = {};
    const norms = specs.map((s) => Math.hypot(...g64.get(s.name)!));
    const typical = [...norms].sort((a, b) => a - b)[Math.floor(norms.length / 2)];
    specs.forEach((s, i) => {
      const ref = g64.get(s.name)!;
      // Gradients that vanish by construction (gates under an ablation; the key MLP's output bias,
      // which shifts every compressed key equally and so cannot change a softmax) are compared
      // in absolute terms: the GPU's must be below 1e-5 of a typical gradient norm.
      errors[s.name] = norms[i] < 1e-9 * typical ? Math.hypot(...grads.get(s.name)!) / (1e-1 * typical) : relRms(grads.get(s.name)!, ref);
    });
    const worst = Math.max(...Object.values(errors));
    expect(worst, JSON.stringify(errors)).toBeLessThanOrEqual(1e-4);
    // The GPU selection is the reference's own (no near-ties at this init scale).
    const refSel = free.layers.map((L) => L.attnCache.nsa!.flatMap((s) => [...s.fwd.selection]));
    selections.forEach((sel, l) => expect([...sel], `layer ${l} selection`).toEqual(refSel[l]));
  });
});
