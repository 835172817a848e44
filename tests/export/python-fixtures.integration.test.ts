// The fixture of the PyTorch package's own parity test (python/tests/test_fixture_parity.py): the
// tiny NSA model after two WebGPU training steps on Brown bytes, exported (config.json and
// model.safetensors in python/tests/fixtures/tiny-nsa/), with the WebGPU model's row-centred logits
// and every layer's selection on the next batch (expected.safetensors, tokens.json). pytest checks the
// package against them with no GPU and no Node. This test keeps them honest: the WebGPU side, run
// again, must give the same weights (rel RMS ≤ 1e-6) and logits (rel RMS ≤ 1e-5) and the same
// selections. NSA_WRITE_FIXTURES=1 writes them instead (after a deliberate change of the model).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { datasetForRun } from '../../src/cli/data-node';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { decodeSafetensors, encodeSafetensors } from '../../src/train/checkpoint/safetensors';
import { createBatch } from '../../src/train/data/datasets';
import { exportDirectoryFiles } from '../../src/train/export/directory';
import { learningRate } from '../../src/train/lr-schedule';
import { preset } from '../../src/train/presets/presets';
import { relRms } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const FIXTURE = resolve(__dirname, '../../python/tests/fixtures/tiny-nsa');
const STEPS = 2;

describe('python/tests/fixtures/tiny-nsa = what the WebGPU side writes now', () => {
  it('weights (rel RMS ≤ 1e-6), centred logits (rel RMS ≤ 1e-5) and selections (equal) of the tiny NSA model', async () => {
    const config = preset('tiny');
    config.model.attention = 'nsa';
    config.data = { source: 'brown', tokenizer: 'byte' };
    config.train = { ...config.train, steps: 10, batchSize: 1, gradAccum: 1, warmupSteps: 2, evalEvery: 0 };
    const t = config.train;
    const gpu = await getGpu();
    const dataset = datasetForRun(config);
    const plan = await ModelPlan.build(gpu, config.model, {
      batchSize: 1,
      gradAccum: 1,
      optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
      scoredPerSequence: dataset.scoredPerSequence,
    });
    plan.importParams(initParams(plan.specs, t.seed));
    const batch = createBatch(1, config.model.seqLen);
    const index = new Int32Array(tokenIndexLength(plan.shape.N));
    const schedule = {
      lrMax: t.lrMax,
      lrMin: t.lrMin,
      warmupSteps: t.warmupSteps,
      totalSteps: t.steps,
      warmupStartFraction: t.warmupStartFraction,
    };
    for (let s = 0; s < STEPS; s++) {
      dataset.nextTrainBatch(batch);
      plan.writeBatch(0, batch.tokens, batch.targets, index);
      const enc = gpu.device.createCommandEncoder();
      plan.encodeTrainStep(enc, learningRate(schedule, s), s + 1);
      gpu.submit([enc.finish()]);
    }
    const params = await plan.exportParams();
    const { m, v } = await plan.exportOptimizerState();
    const files = exportDirectoryFiles({ config, state: { stepsDone: STEPS, batchesDrawn: STEPS }, params, adamM: m, adamV: v });
    dataset.nextTrainBatch(batch);
    plan.writeBatch(0, batch.tokens, batch.targets, index);
    const probs = await plan.readProbabilities();
    const V = config.model.vocabSize;
    const logits = new Float32Array(probs.length);
    for (let r = 0; r < probs.length / V; r++) {
      let mean = 0;
      for (let j = 0; j < V; j++) mean += Math.log(probs[r * V + j]) / V;
      for (let j = 0; j < V; j++) logits[r * V + j] = Math.log(probs[r * V + j]) - mean;
    }
    const T = config.model.seqLen;
    const { nKvGroups: G, nLayers: L } = config.model;
    const nSel = config.model.nsa!.nSel;
    const selections = await Promise.all(
      Array.from({ length: L }, async (_, l) => Float32Array.from((await plan.readSelection(l, T)).sel)),
    );
    plan.destroy();
    const expected = encodeSafetensors(
      [
        { name: 'logits_centred', shape: [1, T, V], data: logits },
        ...selections.map((data, l) => ({ name: `selection.${l}`, shape: [1, T, G, nSel], data })),
      ],
      { what: 'WebGPU row-centred logits and selections of tokens.json (tests/export/python-fixtures.integration.test.ts)' },
    );
    const tokens = JSON.stringify({ tokens: [Array.from(batch.tokens.subarray(0, T))] });
    const model = files.find((f) => f.name === 'model.safetensors')!.bytes;
    const configJson = files.find((f) => f.name === 'config.json')!.bytes;

    if (process.env.NSA_WRITE_FIXTURES === '1') {
      mkdirSync(FIXTURE, { recursive: true });
      writeFileSync(join(FIXTURE, 'config.json'), configJson);
      writeFileSync(join(FIXTURE, 'model.safetensors'), model);
      writeFileSync(join(FIXTURE, 'expected.safetensors'), expected);
      writeFileSync(join(FIXTURE, 'tokens.json'), tokens + '\n');
      console.log(`[fixtures] wrote ${FIXTURE}`);
    }
    const read = (name: string) => decodeSafetensors(readFileSync(join(FIXTURE, name)), { file: name, maxBytes: 2 ** 30 }).tensors;
    expect(JSON.parse(readFileSync(join(FIXTURE, 'tokens.json'), 'utf8'))).toEqual(JSON.parse(tokens));
    const oldModel = read('model.safetensors');
    const weightErr = relRms(
      [...oldModel.values()].flatMap((x) => Array.from(x.data)),
      [...decodeSafetensors(model, { file: 'new', maxBytes: 2 ** 30 }).tensors.values()].flatMap((x) => Array.from(x.data)),
    );
    const old = read('expected.safetensors');
    const logitErr = relRms(old.get('logits_centred')!.data, logits);
    console.log(`[fixtures] tiny NSA: weights rel RMS ${weightErr.toExponential(2)}, logits rel RMS ${logitErr.toExponential(2)}`);
    expect(weightErr, 'weights (NSA_WRITE_FIXTURES=1 rewrites the fixture after a deliberate change)').toBeLessThanOrEqual(1e-6);
    expect(logitErr, 'logits').toBeLessThanOrEqual(1e-5);
    selections.forEach((s, l) => expect(Array.from(old.get(`selection.${l}`)!.data), `selection.${l}`).toEqual(Array.from(s)));
  }, 120_000);
});
