// Training-step invariants: determinism (same seed → same bits), no buffer created during a step,
// exactly one queue submit per optimizer step (gradient accumulation included).
import { describe, expect, it } from 'vitest';

import type { RunConfig } from '../../src/train/config';
import { createDataset } from '../../src/train/data/datasets';
import { trainSteps } from '../../src/train/loop';
import { preset } from '../../src/train/presets/presets';
import { Trainer } from '../../src/train/trainer';
import { getGpu } from '../helpers/gpu';

function smallRun(seed: number, gradAccum = 1): RunConfig {
  const c = preset('tiny');
  // The tiny preset's model (its pipelines are shared with the learning tests), small batches.
  c.train = { ...c.train, batchSize: 2, gradAccum, seed, steps: 20, warmupSteps: 2 };
  c.data = { source: 'random', tokenizer: 'byte' };
  return c;
}

async function losses(seed: number, steps: number, gradAccum = 1): Promise<number[]> {
  const gpu = await getGpu();
  const cfg = smallRun(seed, gradAccum);
  const c0 = cfg;
  const ds = createDataset({ kind: 'random', vocabSize: 256 }, { batchSize: 2, seqLen: c0.model.seqLen, seed });
  const t = await Trainer.create(gpu, cfg, ds);
  const out = (await trainSteps(t, steps)).map((m) => m.loss);
  t.destroy();
  return out;
}

describe('training step invariants', () => {
  it('is deterministic: two runs with one seed give bit-identical losses; another seed differs', async () => {
    const a = await losses(5, 6);
    const b = await losses(5, 6);
    const c = await losses(6, 6);
    expect(a).toHaveLength(6);
    expect(new Float32Array(a)).toEqual(new Float32Array(b));
    expect(a).not.toEqual(c);
  });

  it('creates no buffer during a step and submits exactly once per optimizer step', async () => {
    const gpu = await getGpu();
    for (const gradAccum of [1, 3]) {
      const cfg = smallRun(1, gradAccum);
      const ds = createDataset({ kind: 'random', vocabSize: 256 }, { batchSize: 2, seqLen: cfg.model.seqLen, seed: 1 });
      const t = await Trainer.create(gpu, cfg, ds);
      await t.step(); // step 1 may warm caches; from step 2 on memory is constant
      const before = { ...gpu.counters };
      const steps = 4;
      for (let i = 0; i < steps; i++) await t.step();
      expect(gpu.counters.buffersCreated - before.buffersCreated).toBe(0);
      expect(gpu.counters.submits - before.submits).toBe(steps);
      await t.flush();
      t.destroy();
    }
  });
});
