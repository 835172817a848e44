// The worker's run object on the real GPU path (Dawn): a small NSA model trained a few steps with
// checkpoints (snapshots taken before the evaluation overwrites the activations), the CLI-format
// exports, generation from the trained weights, the test hook's gate, and stop.
import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { snapshotIssues } from '../../src/definitions/selection-snapshot';
import type { RunConfig } from '../../src/train/config';
import { createDataset } from '../../src/train/data/datasets';
import { preset } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';
import type { StreamedToken, TrainUpdate } from '../../src/worker/protocol';
import { PlaygroundRun } from '../../src/worker/run';
import { getGpu } from '../helpers/gpu';
import { nsaTestModel } from '../helpers/models';

// The model and batch of tests/model/one-step-nsa.test.ts: in a full run the pipelines are compiled once.
const model: ModelConfig = nsaTestModel(19);
const T = model.seqLen;
const config: RunConfig = {
  model,
  train: { ...preset('tiny').train, steps: 4, batchSize: 2, warmupSteps: 1, evalEvery: 2, evalBatches: 1 },
  data: { source: 'random', tokenizer: 'byte' },
};

describe('PlaygroundRun (GPU)', () => {
  it('trains with checkpoints, exports in the CLI formats, generates, and stops', async () => {
    const gpu = await getGpu();
    const run = await PlaygroundRun.create(gpu, { config, data: { kind: 'random' }, pageUrl: 'http://x/', snapshotEvery: 2 }, async () => {
      throw new Error('Brown must not be fetched for a random-token run');
    });
    expect(run.info.dataset).toMatchObject({ name: 'random-v29', tokenizer: null, trainTokens: null });
    expect(run.info.snapshotCapacity).toBeGreaterThanOrEqual(2);
    const updates: TrainUpdate[] = [];
    const r = await run.train(4, (u) => updates.push(u));
    expect(r.end).toBe('done');
    expect(r.heartbeat?.phase).toBe('done');
    expect(updates.flatMap((u) => u.metrics.map((m) => m.step))).toEqual([0, 1, 2, 3]);
    expect(updates.flatMap((u) => u.evals.map((e) => e.step))).toEqual([2, 4]);
    // Snapshots after steps 1, 2 and 4 (stepsDone 1, every 2, the last): steps 0, 1, 3.
    expect(run.snapshotSteps).toEqual([0, 1, 3]);
    expect(updates.filter((u) => u.snapshotSteps).at(-1)?.snapshotSteps).toEqual([0, 1, 3]);

    // The step-1 snapshot shares its checkpoint with an evaluation: it must hold the training
    // batch, not the validation batch the evaluation ran afterwards.
    const val = createDataset(
      { kind: 'random', vocabSize: model.vocabSize },
      { batchSize: 2, seqLen: T, seed: config.train.seed },
    ).validationBatches(1)[0];
    for (const step of [0, 1, 3]) {
      for (const layer of [0, 1]) {
        for (const group of [0, 1]) {
          const s = run.snapshot(step, layer, group)!;
          expect(s).not.toBeNull();
          expect([s.step, s.layer, s.group, s.T]).toEqual([step, layer, group, T]);
          expect(snapshotIssues(s)).toEqual([]);
        }
      }
    }
    expect(Array.from(run.snapshot(1, 0, 0)!.tokens)).not.toEqual(Array.from(val.tokens.subarray(0, T)));
    expect(run.snapshot(2, 0, 0)).toBeNull();
    expect(() => run.snapshot(0, 2, 0)).toThrow(RangeError);

    const files = run.exportFiles();
    const csv = files.metricsCsv.trim().split('\n');
    expect(csv).toHaveLength(1 + 4 + 2);
    const beats = files.heartbeatsJsonl
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { phase: string });
    expect(new Set(beats.map((b) => b.phase))).toEqual(new Set(['init', 'step', 'eval', 'done']));
    expect(JSON.parse(files.configJson)).toMatchObject({ ...config, stepsDone: 4 });

    const got: StreamedToken[] = [];
    const g = await run.generate(
      { prompt: '3 14', maxTokens: 3, temperature: 0, topK: 0, seed: 1 },
      () => {},
      (t) => got.push(...t),
    );
    expect(g.promptTokens).toEqual([3, 14]);
    expect(g.text).toBe(g.tokens.map((id) => `[${id}]`).join(''));
    expect(g.tokens).toHaveLength(3);
    expect(g.step).toBe(4);
    expect(got.map((t) => t.t)).toEqual([1, 2, 3]);
    expect(got[0].selection).toHaveLength(2); // one row set per layer

    expect(() => run.debugStall(10)).toThrow(/testHooks/);
    await run.stop();
    await expect(run.train(1, () => {})).rejects.toThrow(/stopped/);
  });

  it('pauses right after the first evaluation that reaches stopAtAccuracy (a sweep target); a later call without it trains on', async () => {
    const gpu = await getGpu();
    const c = recallPreset();
    c.model.attention = 'dense';
    c.train = { ...c.train, steps: 4, batchSize: 1, warmupSteps: 1, evalEvery: 2, evalBatches: 1 };
    const run = await PlaygroundRun.create(
      gpu,
      { config: c, data: { kind: 'recall' }, pageUrl: 'http://x/', snapshotEvery: 0 },
      async () => {
        throw new Error('Brown must not be fetched for a recall run');
      },
    );
    // Any accuracy is ≥ 0: the call ends at the first evaluation (step 2), not at its 4 steps.
    const r = await run.train(4, () => {}, { stopAtAccuracy: 0 });
    expect([r.end, r.stepsDone]).toEqual(['paused', 2]);
    expect(run.history.evals.map((e) => e.step)).toEqual([2]);
    expect(run.history.evals[0].accuracy).toBeGreaterThanOrEqual(0);
    // A later call without the option trains its steps.
    const r2 = await run.train(2, () => {});
    expect([r2.end, r2.stepsDone]).toEqual(['done', 4]);
    expect(run.history.evals.map((e) => e.step)).toEqual([2, 4]);
    await run.stop();
  });
});
