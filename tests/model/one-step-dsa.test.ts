// The DSA model (docs/dsa-spec.md sections 5 and 11) on the GPU: one forward+backward per phase
// against the float64 twin — the cross-entropy and the indexer loss Σ L_I (rel ≤ 1e-5), every
// parameter gradient (rel RMS ≤ 1e-4, f32 vs f64 as CONVENTIONS states), the GPU's top-k equal to
// the twin's own — in the 'simple' branch kernels a software adapter runs (the 'group' variant
// measured 4.7e-8 loss, 1.0e-6 gradients, left out to keep the file near 10 s) — in the warm-up (dense main attention; the main model frozen: its gradients
// exactly 0, no main backward dispatched) and the sparse phase, over two micro-batches (the step's
// means). Then two optimizer steps of one plan, each creating no buffer and submitted once: step 1
// (warm-up) moves only the indexers — weight decay 0.5 leaves every other parameter and its Adam
// moments bit for bit — and step 2 (sparse) moves every parameter.
import { describe, expect, it } from 'vitest';

import type { DsaConfig, DsaPhase } from '../../src/definitions/dsa-config';
import { isIndexerParam } from '../../src/definitions/dsa-params';
import type { ModelConfig } from '../../src/definitions/model-config';
import type { OptimizerSettings } from '../../src/definitions/optimizer';
import { paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { initParams } from '../../src/model/init';
import { ModelPlan, type NamedTensors } from '../../src/model/plan';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel } from '../helpers/models';

const B = 2;
/** Micro-batches per step: the step's losses and gradients are their means (the twin's, averaged). */
const ACCUM = 2;
const DSA: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 5, warmupSteps: 1, lossWeight: 0.7 };
const CFG: ModelConfig = denseTestModel(11, { attention: 'dsa', dsa: DSA });
// Weight decay large enough that decaying a frozen weight would show at once.
const OPT: OptimizerSettings = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.5, gradClip: 0 };

async function setup(nsaKernels: NsaAttnVariant) {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, CFG, { batchSize: B, gradAccum: ACCUM, optimizer: OPT, nsaKernels });
  const params = initParams(paramSpecs(CFG), 7);
  plan.importParams(params);
  const r = rng(107);
  const N = B * CFG.seqLen;
  const batches = Array.from({ length: ACCUM }, (_, m) => {
    const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * CFG.vocabSize));
    const targets = Int32Array.from({ length: N }, () => Math.floor(r() * CFG.vocabSize));
    plan.writeBatch(m, tokens, targets, new Int32Array(tokenIndexLength(N)));
    return { tokens, targets };
  });
  const readback = gpu.device.createBuffer({ size: plan.readbackBytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  /** Encodes `what`, then the step's scalars' readback; one submit. */
  const run = async (what: (enc: GPUCommandEncoder) => void) => {
    const enc = gpu.device.createCommandEncoder();
    what(enc);
    plan.encodeStepReadback(enc, readback);
    gpu.submit([enc.finish()]);
    return plan.decodeStepReadback(await gpu.read({ buffer: readback, offset: 0, size: plan.readbackBytes }));
  };
  return { gpu, plan, params, batches, N, run, readback, done: () => (readback.destroy(), plan.destroy()) };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** One forward+backward in `phase` on the plan's micro-batches, against the twin's mean over them. */
async function checkPhase(t: Setup, phase: DsaPhase) {
  const { plan, params, batches, N, run } = t;
  const scalars = await run((enc) => plan.encodeForwardBackward(enc, phase));
  const grads = await plan.exportGrads();
  const selections: Int32Array[] = [];
  for (let l = 0; l < CFG.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
  const labels = plan.stepDispatches(phase).map((d) => d.label);
  const p64 = new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
  const twins = batches.map(({ tokens, targets }) => {
    const fwd = modelForwardRef(CFG, p64, tokens, targets, B, { dsaPhase: phase });
    return { fwd, grads: modelBackwardRef(CFG, p64, tokens, targets, B, fwd) };
  });
  const mean = (f: (i: number) => number) => twins.reduce((a, _, i) => a + f(i), 0) / ACCUM;
  const loss = mean((i) => twins[i].fwd.loss);
  const indexLoss = mean((i) => twins[i].fwd.dsa!.indexLoss);
  const g64 = new Map(
    paramSpecs(CFG).map((s) => [s.name, twins[0].grads.get(s.name)!.map((_, j) => mean((i) => twins[i].grads.get(s.name)![j]))]),
  );
  // The saved selection is the last micro-batch's.
  const fwd = twins[ACCUM - 1].fwd;
  const used = (re: RegExp) => labels.filter((l) => re.test(l)).length;
  expect(used(/^dsa\.indexScores$/), 'the indexer scores every layer').toBe(CFG.nLayers);
  expect(used(/^dsa\.index\.dw[qkw]$/), 'the indexers’ weight gradients').toBe(3 * CFG.nLayers);
  if (phase === 'warmup') {
    expect(used(/\.dx$|^nsa\.sel\./), 'no main backward, no sparse attention').toBe(0);
  } else {
    expect(used(/^lm_head\.dx$/)).toBe(1);
    expect(used(/^nsa\.sel\.forward$/), 'main attention over the selected tokens').toBe(CFG.nLayers);
  }
  const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);
  expect(rel(scalars.loss, loss), `loss ${scalars.loss} vs ${loss}`).toBeLessThanOrEqual(1e-5);
  expect(indexLoss).toBeGreaterThan(0);
  expect(rel(scalars.indexLoss!, indexLoss), `L_I ${scalars.indexLoss} vs ${indexLoss}`).toBeLessThanOrEqual(1e-5);
  const errors: Record<string, number> = {};
  for (const s of paramSpecs(CFG)) {
    const g = grads.get(s.name)!;
    if (phase === 'warmup' && !isIndexerParam(s.name))
      expect(
        g.every((x) => x === 0),
        `${s.name} frozen`,
      ).toBe(true);
    else errors[s.name] = relRms(g, g64.get(s.name)!);
  }
  expect(Object.keys(errors).length).toBe(phase === 'warmup' ? 3 * CFG.nLayers : paramSpecs(CFG).length);
  expect(Math.max(...Object.values(errors)), JSON.stringify(errors)).toBeLessThanOrEqual(1e-4);
  fwd.layers.forEach((L, l) =>
    expect([...selections[l]], `layer ${l} selection`).toEqual(L.attnCache.dsa!.seqs.flatMap((s) => [...s.sel])),
  );
  // The eval forward (micro-batch 0) of the model after 0 steps (warm-up) or 2 (sparse).
  const enc = t.gpu.device.createCommandEncoder();
  plan.encodeEval(enc, phase === 'warmup' ? 0 : 2);
  plan.encodeEvalReadback(enc, t.readback);
  t.gpu.submit([enc.finish()]);
  const evalLoss = new Float32Array(await t.gpu.read({ buffer: t.readback, offset: 0, size: 4 }))[0];
  expect(rel(evalLoss, twins[0].fwd.loss), `eval loss ${evalLoss} vs ${twins[0].fwd.loss}`).toBeLessThanOrEqual(1e-5);
  const other = modelForwardRef(CFG, p64, batches[0].tokens, batches[0].targets, B, { dsaPhase: phase === 'warmup' ? 'sparse' : 'warmup' });
  expect(rel(evalLoss, other.loss), 'the other phase’s loss is far').toBeGreaterThan(1e-3);
  // Sparse rows: early queries pad with −1, later ones skip tokens.
  expect(selections[0].some((j) => j === -1)).toBe(true);
}

/** Step 1 (warm-up) moves only the indexers, step 2 (sparse) every parameter. */
async function checkSteps(t: Setup) {
  const { plan, params, gpu, readback } = t;
  /** One optimizer step: nothing created, one submit (CONVENTIONS), whichever phase. */
  const run = async (step: number) => {
    const before = { ...gpu.counters };
    const enc = gpu.device.createCommandEncoder();
    plan.encodeTrainStep(enc, 0.01, step);
    plan.encodeStepReadback(enc, readback);
    gpu.submit([enc.finish()]);
    expect(gpu.counters.buffersCreated - before.buffersCreated, `step ${step} creates nothing`).toBe(0);
    expect(gpu.counters.submits - before.submits, `step ${step} submits once`).toBe(1);
    return plan.decodeStepReadback(await gpu.read({ buffer: readback, offset: 0, size: plan.readbackBytes }));
  };
  const changed = (a: NamedTensors, b: ReadonlyMap<string, Float32Array>, name: string) =>
    a.get(name)!.some((x, i) => x !== b.get(name)![i]);
  const s1 = await run(1);
  const p1 = await plan.exportParams();
  const m1 = await plan.exportOptimizerState();
  for (const s of paramSpecs(CFG)) {
    if (isIndexerParam(s.name)) expect(changed(p1, params, s.name), `${s.name} learns in the warm-up`).toBe(true);
    else {
      expect(changed(p1, params, s.name), `${s.name} frozen`).toBe(false);
      expect(m1.m.get(s.name)!.every((x) => x === 0) && m1.v.get(s.name)!.every((x) => x === 0), `${s.name} moments`).toBe(true);
    }
  }
  expect(s1.indexLoss).toBeGreaterThan(0);
  expect(s1.gradNorm).toBeGreaterThan(0);
  const s2 = await run(2);
  const p2 = await plan.exportParams();
  for (const s of paramSpecs(CFG)) expect(changed(p2, p1, s.name), `${s.name} learns in the sparse phase`).toBe(true);
  expect(s2.indexLoss).toBeGreaterThan(0);
  expect(Number.isFinite(s2.loss)).toBe(true);
}

describe('DSA model on the GPU vs the float64 twin', { timeout: 300_000 }, () => {
  it('simple kernels: warm-up and sparse phase (losses rel ≤ 1e-5, gradients rel RMS ≤ 1e-4, selection = twin); steps 1 and 2', async () => {
    const t = await setup('simple');
    await checkPhase(t, 'warmup');
    await checkPhase(t, 'sparse');
    await checkSteps(t);
    t.done();
    expect(t.gpu.reports).toEqual([]);
  });
});
