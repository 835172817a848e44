// The sequence-length warm-up in the WebGPU trainer (train.shortSeqSteps, shortSeqLen;
// src/train/trainer.ts): its steps are exactly the steps of a run at the short length (same
// weights, data, schedule: bit for bit), then the run continues at model.seqLen with the weights and
// AdamW moments moved; a run stopped anywhere (inside the warm-up, at its end, after it), written
// to a checkpoint file and resumed matches the uninterrupted run bit for bit; an evaluation during
// the warm-up runs at model.seqLen and does not disturb training; the step statistics keep one
// shape (the warm-up's selection-distance histogram padded to the full length's bins); a recall
// warm-up on fewer pairs trains as that task at the short length; a dataset built without the
// warm-up is refused before any GPU work; the resource estimate counts both plans.
import { describe, expect, it } from 'vitest';

import { datasetForRun } from '../../src/cli/data-node';
import { matmulPartsFloats } from '../../src/kernels/matmul';
import { decodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { type RunConfig, shortSeqConfig } from '../../src/train/config';
import { createDataset, type Dataset } from '../../src/train/data/datasets';
import { withShortSeq } from '../../src/train/data/short-seq';
import { trainSteps } from '../../src/train/loop';
import { mqarPresetConfig } from '../../src/train/presets/mqar-preset';
import { preset } from '../../src/train/presets/presets';
import { runFootprint } from '../../src/train/resources';
import { Trainer, type TrainerResumeState } from '../../src/train/trainer';
import type { StepMetrics } from '../../src/train/types';
import { expectSameRun, stepBits } from '../helpers/exact-resume';
import { getGpu } from '../helpers/gpu';

const STEPS = 4;
const WARM = 2;

function warmRun(): RunConfig {
  const c = preset('tiny'); // NSA, T = 64
  c.model.attention = 'nsa';
  c.train = { ...c.train, steps: STEPS, batchSize: 2, gradAccum: 2, warmupSteps: 1, shortSeqSteps: WARM, shortSeqLen: 32, evalBatches: 1 };
  c.data.source = 'random';
  return c;
}

const source = (c: RunConfig): Dataset =>
  createDataset({ kind: 'random', vocabSize: 256 }, { batchSize: c.train.batchSize, seqLen: c.model.seqLen, seed: c.train.seed });
const dataset = (c: RunConfig) => withShortSeq(c, source);

/** The uninterrupted run, trained once for every comparison below. */
let uninterrupted: Promise<{ all: StepMetrics[]; end: TrainerResumeState }> | undefined;
function wholeRun() {
  uninterrupted ??= (async () => {
    const cfg = warmRun();
    const whole = await Trainer.create(await getGpu(), cfg, dataset(cfg));
    const all = await trainSteps(whole, STEPS);
    const end = await whole.resumeState();
    whole.destroy();
    return { all, end };
  })();
  return uninterrupted;
}

describe('sequence-length warm-up (WebGPU trainer)', { timeout: 600_000 }, () => {
  it('the warm-up steps = a run at the short length, bit for bit; then training at model.seqLen; eval at model.seqLen', async () => {
    const gpu = await getGpu();
    const cfg = warmRun();
    const warm = await Trainer.create(gpu, cfg, dataset(cfg));
    expect([warm.inShortSeq, warm.trainPlan.shape.T, warm.plan.shape.T]).toEqual([true, 32, 64]);
    expect(warm.tokensPerStep).toBe(2 * 2 * 32);
    // The resource estimate counts both plans (as the config-fuzz test bounds one plan's: within 5 slices each).
    const estimate = runFootprint(cfg, matmulPartsFloats(gpu.adapter)).gpuBytes - (warm.plan.gpuBytes + warm.trainPlan.gpuBytes);
    expect(estimate).toBeGreaterThanOrEqual(0);
    expect(estimate).toBeLessThan(2 * 5 * 256);
    const head = await trainSteps(warm, 1);
    // An evaluation inside the warm-up: on the full-length plan, with the warm-up's weights.
    const val = await warm.evaluate();
    expect(Number.isFinite(val.valLoss)).toBe(true);
    expect((await warm.evalPlan()).shape.T).toBe(64);
    const all = [...head, ...(await trainSteps(warm, STEPS))];
    expect([warm.inShortSeq, warm.trainPlan.shape.T, warm.tokensPerStep]).toEqual([false, 64, 2 * 2 * 64]);
    const end = await warm.resumeState();
    warm.destroy();

    // The same config at the short length without a warm-up: the same first WARM steps.
    const shortCfg = shortSeqConfig(cfg);
    shortCfg.train = { ...shortCfg.train, shortSeqSteps: 0 };
    const short = await Trainer.create(gpu, shortCfg, dataset(shortCfg));
    expect(short.inShortSeq).toBe(false);
    const shortSteps = await trainSteps(short, WARM);
    short.destroy();
    expect(stepBits(all.slice(0, WARM))).toEqual(stepBits(shortSteps));
    // After the warm-up the steps run at T = 64: finite, and not the short run's continuation.
    expect(all.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    for (const m of all) expect(Number.isFinite(m.loss) && Number.isFinite(m.gradNorm)).toBe(true);
    // One shape of NSA statistics through the run: the warm-up's histogram padded with zeros to the
    // full length's distances (its own bins are the short run's).
    const bins = all[WARM].nsa!.histogram.length;
    expect(all.map((m) => m.nsa!.histogram.length)).toEqual([bins, bins, bins, bins]);
    const shortBins = shortSteps[0].nsa!.histogram.length;
    expect(shortBins).toBeLessThan(bins);
    expect(all[0].nsa!.histogram).toEqual([...shortSteps[0].nsa!.histogram, ...Array(bins - shortBins).fill(0)]);
    expect(end.stepsDone).toBe(STEPS);
    expect(end.batchesDrawn).toBe(STEPS * 2);

    // The evaluation did not disturb training: the run without it has the same bits.
    const plain = await wholeRun();
    expectSameRun({ metrics: plain.all, end: plain.end }, { metrics: all, end });
  });

  it('a recall warm-up on fewer pairs (train.shortSeqPairs) = a run of that task at the short length, bit for bit (its loss over its own answers)', async () => {
    const gpu = await getGpu();
    const cfg = mqarPresetConfig('mqar-tiny'); // T = 64, 8 pairs and queries: 8 answers scored a sequence
    cfg.train = {
      ...cfg.train,
      steps: STEPS,
      batchSize: 2,
      warmupSteps: 1,
      shortSeqSteps: WARM,
      shortSeqLen: 48,
      shortSeqPairs: 3,
      evalBatches: 1,
    };
    const warm = await Trainer.create(gpu, cfg, datasetForRun(cfg));
    const all = await trainSteps(warm, STEPS);
    warm.destroy();
    const shortCfg = shortSeqConfig(cfg);
    shortCfg.train = { ...shortCfg.train, shortSeqSteps: 0, shortSeqPairs: 0 };
    expect(shortCfg.data.recall!.pairs).toBe(3);
    const short = await Trainer.create(gpu, shortCfg, datasetForRun(shortCfg));
    const shortSteps = await trainSteps(short, WARM);
    short.destroy();
    expect(stepBits(all.slice(0, WARM))).toEqual(stepBits(shortSteps));
    for (const m of all) expect(Number.isFinite(m.loss) && Number.isFinite(m.gradNorm)).toBe(true);
  });

  it.each([1, WARM, WARM + 1])('stopped at step %i, written, read back and resumed = uninterrupted, bit for bit', async (stopAt) => {
    const gpu = await getGpu();
    const cfg = warmRun();
    const { all, end } = await wholeRun();
    const first = await Trainer.create(gpu, cfg, dataset(cfg));
    const head = await trainSteps(first, stopAt);
    const file = await first.checkpoint({ metrics: head, evals: [], reason: 'interval' });
    first.destroy();
    const back = decodeCheckpoint(file, { file: 'warm.safetensors' });
    expect(back.config.train.shortSeqSteps).toBe(WARM);
    const second = await Trainer.fromCheckpoint(gpu, back, dataset(back.config));
    expect(second.inShortSeq).toBe(stopAt < WARM);
    const tail = await trainSteps(second, STEPS);
    const resumed = await second.resumeState();
    second.destroy();

    expectSameRun({ metrics: all, end }, { metrics: [...back.metrics, ...tail], end: resumed });
  });

  it('a dataset built without the warm-up is refused before any GPU work', async () => {
    const gpu = await getGpu();
    const cfg = warmRun();
    await expect(Trainer.create(gpu, cfg, source(cfg))).rejects.toThrow(/warm-up \(none\) is not the config's.*withShortSeq/);
  });
});
