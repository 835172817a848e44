// The training loop and the worker session on the real Trainer (Dawn): each step's metrics once
// and in order with evaluations at checkpoints, and a non-finite step surfacing as the trainer's
// NonFiniteError through the session (the path the page takes), with the weights left intact; a
// run at learning rate 10 stopped by the divergence guard, the same run at the preset's rate not.
import { describe, expect, it } from 'vitest';

import type { RunConfig } from '../../src/train/config';
import { createDataset } from '../../src/train/data/datasets';
import { DivergenceError } from '../../src/train/divergence';
import { trainingLoop, trainSteps } from '../../src/train/loop';
import { preset } from '../../src/train/presets/presets';
import { NonFiniteError, Trainer } from '../../src/train/trainer';
import { TrainingSession } from '../../src/worker/session';
import { getGpu } from '../helpers/gpu';

function tinyRun(steps: number): RunConfig {
  const c = preset('tiny');
  c.train = { ...c.train, steps, batchSize: 2, warmupSteps: 1, evalBatches: 1 };
  c.data.source = 'random';
  return c;
}

async function trainer(steps: number, edit: (c: RunConfig) => void = () => {}): Promise<Trainer> {
  const cfg = tinyRun(steps);
  edit(cfg);
  const ds = createDataset({ kind: 'random', vocabSize: 256 }, { batchSize: 2, seqLen: cfg.model.seqLen, seed: 2 });
  return Trainer.create(await getGpu(), cfg, ds);
}

describe('training loop on the real trainer', () => {
  it('every step once and in order; evaluations at checkpoints with no step in flight', async () => {
    const t = await trainer(5);
    const seen: Array<number | string> = [];
    for await (const e of trainingLoop(t, { until: 5, checkpointAfter: (n) => n === 2 || n === 4 })) {
      if (e.kind === 'step') seen.push(e.metrics.step);
      else {
        expect(t.stepsInFlight).toBe(0);
        const ev = await t.evaluate();
        seen.push(`eval@${ev.step}`);
      }
    }
    expect(seen).toEqual([0, 1, 'eval@2', 2, 3, 'eval@4', 4]);
    expect(t.lastStepMetrics?.step).toBe(4);
    t.destroy();
  });

  it('a NaN weight: NonFiniteError at step 0 from the loop with the weights intact, and from the session the page runs', async () => {
    const poison = async (t: Trainer) => {
      const params = await t.readParams();
      const name = [...params.keys()][0];
      const bad = Float32Array.from(params.get(name)!);
      bad[0] = Number.NaN;
      const poisoned = new Map(params).set(name, bad);
      t.plan.importParams(poisoned);
      return poisoned;
    };
    const t1 = await trainer(3);
    const uploaded = await poison(t1);
    const err = await trainSteps(t1, 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonFiniteError);
    expect([(err as NonFiniteError).name, (err as NonFiniteError).step]).toEqual(['NonFiniteError', 0]);
    expect(Number.isNaN((err as NonFiniteError).loss)).toBe(true);
    await t1.flush().catch(() => []); // the later steps in flight are non-finite too
    // The optimizer skipped every non-finite update: the weights are bit-identical to the upload.
    const after = await t1.readParams();
    for (const [k, v] of uploaded) expect(new Uint32Array(after.get(k)!.buffer), k).toEqual(new Uint32Array(v.buffer));
    t1.destroy();

    const t2 = await trainer(3);
    await poison(t2);
    const session = new TrainingSession(t2, await getGpu());
    const err2 = await session.train(3, () => {}).catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(NonFiniteError);
    expect((err2 as NonFiniteError).step).toBe(0);
    expect(session.state).toBe('closed');
  });

  it('learning rate 10 (lrMax = lrMin): DivergenceError once the loss stayed above 3 ln 256 for 5 steps; the preset rate runs on', async () => {
    const lr10 = (c: RunConfig) => {
      c.train.lrMax = 10;
      c.train.lrMin = 10;
    };
    const t1 = await trainer(12, lr10);
    const err = await trainSteps(t1, 12).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DivergenceError);
    const e = err as DivergenceError;
    expect(e.step - e.firstStep).toBe(4);
    expect(e.step).toBeLessThan(12);
    expect(e.loss).toBeGreaterThan(3 * Math.log(256));
    expect(e.message).toMatch(/has been above 16\.6355 \(train\.divergenceFactor 3 × ln 256\) for 5 consecutive steps/);
    await t1.flush().catch(() => []);
    t1.destroy();

    const t2 = await trainer(12);
    const losses = (await trainSteps(t2, 12)).map((m) => m.loss);
    expect(losses).toHaveLength(12);
    expect(Math.max(...losses)).toBeLessThan(1.1 * Math.log(256));
    t2.destroy();
  });
});
