// The passkey task on the GPU, kept small (the tiny dense preset, whose pipelines other test files
// already build; the eval CLI runs NSA models through the same code): one training step on passkey
// data scores only the k answer digits per sequence, and the run's evaluation (CLI and page)
// reports the per-digit accuracy of the answer scorer on the validation batches and its keys by
// needle depth.
import { describe, expect, it } from 'vitest';

import { lossScale } from '../../src/model/plan';
import { passkeyAnswerPositions, passkeyDatasetForRun, passkeyNeedleRange } from '../../src/train/data/passkey';
import { PASSKEY_DEPTH_BINS } from '../../src/train/eval/passkey-depth';
import { scoreRecall } from '../../src/train/eval/recall-eval';
import { evaluateRun } from '../../src/train/eval/task-eval';
import { trainingLoop } from '../../src/train/loop';
import { PASSKEY_TASK } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';
import { withDataSource } from '../../src/train/presets/recall-preset';
import { Trainer } from '../../src/train/trainer';
import type { StepMetrics } from '../../src/train/types';
import { getGpu } from '../helpers/gpu';

describe('passkey on the GPU', () => {
  it('one step: the loss is the mean over the k answer digits; evaluateRun reports their accuracy', async () => {
    const gpu = await getGpu();
    const cfg = preset('tiny');
    cfg.model.attention = 'dense';
    cfg.data = withDataSource(cfg.data, 'passkey');
    cfg.train.evalBatches = 2;
    const { batchSize: B } = cfg.train;
    const T = cfg.model.seqLen;
    const k = PASSKEY_TASK.keyLength;
    const ds = passkeyDatasetForRun(cfg);
    const trainer = await Trainer.create(gpu, cfg, ds);
    try {
      expect(trainer.plan.shape.scoredPerSequence).toBe(k);
      expect(lossScale(trainer.plan.shape, 'eval')).toBe(1 / (B * k));
      let step: StepMetrics | null = null;
      for await (const e of trainingLoop(trainer, { until: 1 })) if (e.kind === 'step') step = e.metrics;
      // Untrained (init std 0.02): near-uniform over the model's vocabulary at the answers.
      expect(Math.abs(step!.loss - Math.log(cfg.model.vocabSize))).toBeLessThan(0.3);
      const answers = passkeyAnswerPositions(T, k);
      const s = await scoreRecall(trainer, ds.validationBatches(2));
      expect(s.answers).toBe(2 * B * k);
      expect(s.sequences).toBe(2 * B);
      expect(s.sequenceAccuracy).toBeLessThanOrEqual(s.accuracy);
      const e = await evaluateRun(trainer, cfg);
      expect(e.accuracy).toBe(s.accuracy);
      // Per digit (the page's dashed lines): k of them, whose mean is the accuracy.
      expect(e.accuracyByAnswer).toEqual(s.accuracyByAnswer);
      expect(e.accuracyByAnswer).toHaveLength(k);
      expect(Math.abs(e.accuracyByAnswer!.reduce((a, b) => a + b, 0) / k - s.accuracy)).toBeLessThan(1e-12);
      // By needle depth (the page's strip): 4 ranges tiling the task's needle range, holding every
      // validation key once and, between them, the keys right whole.
      const [lo, hi] = passkeyNeedleRange(cfg.data.passkey!, T);
      const depth = e.keysByDepth!;
      expect(depth).toHaveLength(PASSKEY_DEPTH_BINS);
      expect([depth[0].from, depth[PASSKEY_DEPTH_BINS - 1].to]).toEqual([lo, hi]);
      for (let i = 1; i < depth.length; i++) expect(depth[i].from).toBe(depth[i - 1].to + 1);
      expect(depth.reduce((a, d) => a + d.sequences, 0)).toBe(s.sequences);
      expect(depth.reduce((a, d) => a + d.keysRight, 0)).toBe(s.sequencesCorrect);
      expect(e.valLoss).toBe((await trainer.evaluate()).valLoss);
      expect(Math.abs(e.valLoss - s.answerLoss)).toBeLessThan(1e-3); // GPU f32 loss vs f64 of the f32 probabilities
    } finally {
      trainer.destroy();
    }
  });
});
