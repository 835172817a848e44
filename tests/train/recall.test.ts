// The associative-recall task and its scorer:
// - sequence structure (vocab ranges, distinct keys, non-overlapping pairs, queries at the end, the
//   last target is an answer), answers out of the window (≥ 80% required; the preset makes it 100%,
//   beyond the window-only model's nLayers·(w−1) reach), placement range hit at both ends;
// - the Dataset contract (shift, determinism, held-out stream, exact unigram entropy);
// - the argmax decoding from the fused cross-entropy's in-place output, on the real kernel;
// - scoreRecall on an untrained recall-preset model (counts and the mass check).
import { describe, expect, it } from 'vitest';

import { IGNORE_TARGET } from '../../src/definitions/targets';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { lossScale } from '../../src/model/plan';
import { createBatch, unigramEntropyOf } from '../../src/train/data/batch';
import {
  createRecallDataset,
  generateRecallSequence,
  recallAnswerPositions,
  type RecallTask,
  recallVocab,
  validateRecallTask,
} from '../../src/train/data/recall';
import { scoreRecall } from '../../src/train/eval/recall-eval';
import { evaluateRun } from '../../src/train/eval/task-eval';
import { preset } from '../../src/train/presets/presets';
import { RECALL_PRESET, RECALL_TASK } from '../../src/train/presets/recall-preset';
import { Trainer } from '../../src/train/trainer';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const T = RECALL_PRESET.model.seqLen;
const W = RECALL_PRESET.model.nsa!.w;
const LAYERS = RECALL_PRESET.model.nLayers;

describe('recall sequences', () => {
  const task = RECALL_TASK;
  const v = recallVocab(task);
  const samples = Array.from(
    { length: 2000 },
    (
      (r) => () =>
        generateRecallSequence(task, T, r)
    )(rng(11)),
  );

  it('structure: fillers, distinct keys with values, non-overlapping pairs, queries at the end', () => {
    const isKey = (x: number) => x >= v.keyBase && x < v.valueBase;
    const isValue = (x: number) => x >= v.valueBase && x < v.size;
    const R = T + 1 - 2 * task.queries;
    expect(recallAnswerPositions(T, task.queries)).toEqual([49, 51, 53, 55, 57, 59, 61, 63]);
    // Violations are collected (one expect per sample is slow over 2000 samples).
    const bad: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok && bad.length < 10) bad.push(what);
    };
    samples.forEach((s, n) => {
      check(s.raw.length === T + 1, `#${n} length`);
      check(s.pairStarts.length === task.pairs, `#${n} pair count`);
      for (let i = 1; i < s.pairStarts.length; i++) check(s.pairStarts[i] >= s.pairStarts[i - 1] + 2, `#${n} pairs overlap`);
      const starts = new Set(s.pairStarts);
      const keysSeen = new Set<number>();
      for (let p = 0; p < R; p++) {
        if (starts.has(p)) {
          check(isKey(s.raw[p]) && isValue(s.raw[p + 1]), `#${n} pair at ${p} is not key, value`);
          check(!keysSeen.has(s.raw[p]), `#${n} key ${s.raw[p]} stored twice`);
          keysSeen.add(s.raw[p]);
        } else if (!starts.has(p - 1)) check(s.raw[p] >= v.fillerBase && s.raw[p] < v.keyBase, `#${n} position ${p} is not a filler`);
      }
      check(s.queryPositions.join() === recallAnswerPositions(T, task.queries).join(), `#${n} query positions`);
      check(s.queryPositions[task.queries - 1] === T - 1, `#${n} last target is not an answer`);
      const queried = new Set<number>();
      s.queryPositions.forEach((t, i) => {
        const kp = s.keyPositions[i];
        check(starts.has(kp) && s.valuePositions[i] === kp + 1, `#${n} query ${i} points at no pair`);
        check(s.raw[t] === s.raw[kp], `#${n} query ${i} is not the stored key`);
        check(s.raw[t + 1] === s.raw[kp + 1], `#${n} answer ${i} is not the stored value`);
        check(kp >= task.minStart, `#${n} queried key before minStart`);
        queried.add(kp);
      });
      check(queried.size === task.queries, `#${n} a pair is queried twice`);
    });
    expect(bad).toEqual([]);
  });

  it('answers lie outside the window: ≥ 80% required, 100% here, also beyond nLayers·(w−1)', () => {
    let outside = 0;
    let total = 0;
    let minDist = Infinity;
    for (const s of samples) {
      s.queryPositions.forEach((t, i) => {
        const dist = t - s.valuePositions[i]; // the window of query t covers [t − w + 1, t]
        minDist = Math.min(minDist, dist);
        total++;
        if (dist >= W) outside++;
      });
    }
    console.log(`recall: ${outside}/${total} answers outside w = ${W}; nearest answer ${minDist} positions back`);
    expect(outside / total).toBeGreaterThanOrEqual(0.8);
    expect(outside).toBe(total);
    expect(minDist).toBeGreaterThan(LAYERS * (W - 1));
    expect(minDist).toBe(task.minDistance); // the bound is reached, not just respected
  });

  it('queried keys cover their whole allowed range (no off-by-one in the placement)', () => {
    const lo = task.minStart;
    const hi = T + 1 - 2 * task.queries - task.minDistance - 1;
    const seen = new Set(samples.flatMap((s) => s.keyPositions));
    expect(Math.min(...seen)).toBe(lo);
    expect(Math.max(...seen)).toBe(hi);
    expect(seen.size).toBe(hi - lo + 1);
  });

  it('answers are uniform over the values: their empirical entropy is ln(values) (±0.01 nats)', () => {
    const answers = new Int32Array(samples.flatMap((s) => s.queryPositions.map((t) => s.raw[t + 1] - v.valueBase)));
    expect(Math.abs(unigramEntropyOf(answers, task.values) - Math.log(task.values))).toBeLessThan(0.01);
  });

  it('rejects infeasible tasks before generating, naming the field', () => {
    const bad = (patch: Partial<RecallTask>, seqLen = T) =>
      validateRecallTask({ ...task, ...patch }, seqLen)
        .map((i) => `${i.field}: ${i.message}`)
        .join('; ');
    expect(bad({})).toBe('');
    expect(bad({ pairs: 17 })).toMatch(/^pairs: must not exceed keys \(17 > 16\)/);
    expect(bad({ queries: 11 })).toMatch(/^queries: must not exceed pairs \(11 > 10\)/);
    expect(bad({ values: 1 })).toBe('values: must be an integer ≥ 2 (got 1)');
    expect(bad({ minStart: -1 })).toBe('minStart: must be an integer ≥ 0 (got -1)');
    expect(bad({ minDistance: 27 })).toMatch(/^minDistance: minStart 8 and minDistance 27/);
    expect(bad({}, 20)).toMatch(/^pairs: 10 pairs need a pair region of at least 30 tokens; seqLen 20/);
    expect(() => createRecallDataset({ kind: 'recall', ...task, minDistance: 60 }, { batchSize: 2, seqLen: T, seed: 1 })).toThrow(
      /minDistance: .*minDistance 60/,
    );
    // The tightest feasible placement still generates.
    const tight: RecallTask = { ...task, minDistance: T + 1 - 2 * task.queries - task.minStart - 2 * task.queries + 1 };
    expect(validateRecallTask(tight, T)).toEqual([]);
    expect(validateRecallTask({ ...tight, minDistance: tight.minDistance + 1 }, T).map((i) => i.field)).toEqual(['minDistance']);
    const s = generateRecallSequence(tight, T, rng(5));
    expect(Math.min(...s.keyPositions)).toBe(task.minStart);
  });
});

describe('recall dataset', () => {
  const B = 3;
  const opts = (seed: number) => ({ batchSize: B, seqLen: T, seed });
  const spec = { kind: 'recall' as const, ...RECALL_TASK };

  it('targets are the inputs shifted by one; same seed same batches; validation fixed and held out', () => {
    const a = createRecallDataset(spec, opts(4));
    const b = createRecallDataset(spec, opts(4));
    const c = createRecallDataset(spec, opts(5));
    const [x, y, z] = [createBatch(B, T), createBatch(B, T), createBatch(B, T)];
    a.nextTrainBatch(x);
    b.nextTrainBatch(y);
    c.nextTrainBatch(z);
    expect(y).toEqual(x);
    expect(z).not.toEqual(x);
    // Only the answers are scored: their targets are the next inputs, every other target is ignored.
    const answers = new Set(recallAnswerPositions(T, RECALL_TASK.queries));
    for (let r = 0; r < B; r++)
      for (let t = 0; t < T; t++) {
        const target = x.targets[r * T + t];
        if (!answers.has(t)) expect(target).toBe(IGNORE_TARGET);
        else if (t + 1 < T) expect(target).toBe(x.tokens[r * T + t + 1]);
        else expect(target).toBeGreaterThanOrEqual(recallVocab(RECALL_TASK).valueBase);
      }
    expect(a.scoredPerSequence).toBe(RECALL_TASK.queries);
    expect(a.unigramEntropy()).toBeCloseTo(Math.log(RECALL_TASK.values), 12);
    expect(a.vocabSize).toBe(recallVocab(RECALL_TASK).size);
    const v1 = a.validationBatches(2);
    expect(a.validationBatches(2)).toEqual(v1);
    expect(v1[0]).not.toEqual(x);
  });
});

describe('scoreRecall', () => {
  // The tiny dense preset on recall data: the scorer only reads the plan's eval outputs, and these
  // are the pipelines other test files already build (the NSA ones take most of a minute to compile
  // on SwiftShader). The eval CLI scores NSA models through the same code.
  it('untrained model: B·m answers, near-uniform p(value), probabilities agree with the GPU losses', async () => {
    const gpu = await getGpu();
    const task = RECALL_TASK;
    const cfg = preset('tiny');
    cfg.model.attention = 'dense';
    const B = cfg.train.batchSize;
    const ds = createRecallDataset({ kind: 'recall', ...task }, { batchSize: B, seqLen: T, seed: 3 });
    const trainer = await Trainer.create(gpu, cfg, ds);
    try {
      const answers = recallAnswerPositions(T, task.queries);
      const [batch] = ds.validationBatches(1);
      const s = await scoreRecall(trainer, [batch]);
      expect(s.answers).toBe(B * task.queries);
      expect(s.accuracy).toBe(s.correct / s.answers);
      // Initial weights (std 0.02): the softmax is close to uniform over the vocabulary.
      const V = cfg.model.vocabSize;
      expect(s.meanPCorrect).toBeGreaterThan(1 / V / 1.5);
      expect(s.meanPCorrect).toBeLessThan(1.5 / V);
      expect(Math.abs(s.answerLoss - Math.log(V))).toBeLessThan(0.3);
      // Row indexing: the eval forward's per-position losses give the same mean p(value).
      const N = B * T;
      trainer.plan.writeBatch(0, batch.tokens, batch.targets, new Int32Array(tokenIndexLength(N)));
      const enc = gpu.device.createCommandEncoder();
      trainer.plan.encodeEval(enc);
      gpu.submit([enc.finish()]);
      const losses = await trainer.plan.readLosses();
      // Unscored positions contribute nothing, and the loss is the mean over the answers alone.
      const ignored = Array.from({ length: N }, (_, n) => n).filter((n) => batch.targets[n] === IGNORE_TARGET);
      expect(ignored.length).toBe(B * (T - task.queries));
      expect(ignored.every((n) => losses[n] === 0)).toBe(true);
      expect(trainer.plan.shape.scoredPerSequence).toBe(task.queries);
      expect(lossScale(trainer.plan.shape, 'eval')).toBe(1 / (B * task.queries));
      const rows = Array.from({ length: B }, (_, r) => answers.map((t) => r * T + t)).flat();
      const meanP = rows.reduce((a, n) => a + Math.exp(-losses[n]), 0) / rows.length;
      expect(Math.abs(meanP - s.meanPCorrect)).toBeLessThan(1e-6); // GPU f32 loss vs f64 softmax of the f32 logits
      // The probabilities are a distribution per row, and the logits do not depend on the targets:
      // retarget every answer to the argmax and the accuracy must be exactly 1; to any other token, exactly 0.
      const probs = await trainer.plan.readProbabilities();
      for (const n of rows) expect(Math.abs(probs.subarray(n * V, (n + 1) * V).reduce((a, p) => a + p, 0) - 1)).toBeLessThan(1e-5);
      const argmax = rows.map((n) => {
        const row = Array.from(probs.subarray(n * V, (n + 1) * V));
        return row.indexOf(Math.max(...row));
      });
      const retarget = (f: (a: number) => number) => {
        const b = { tokens: batch.tokens, targets: batch.targets.slice() };
        rows.forEach((n, i) => (b.targets[n] = f(argmax[i])));
        return b;
      };
      expect((await scoreRecall(trainer, [retarget((a) => a)])).accuracy).toBe(1);
      expect((await scoreRecall(trainer, [retarget((a) => (a + 1) % V)])).accuracy).toBe(0);
      // The run's evaluation (CLI and page): the validation loss and, for recall data, the accuracy
      // of the same scorer on the same validation batches; text data gets none.
      const run = {
        ...cfg,
        train: { ...cfg.train, evalBatches: 2 },
        data: { source: 'recall' as const, tokenizer: 'byte' as const, recall: task },
      };
      const e = await evaluateRun(trainer, run);
      expect(e.accuracy).toBe((await scoreRecall(trainer, ds.validationBatches(2))).accuracy);
      expect(e.valLoss).toBe((await trainer.evaluate()).valLoss);
      expect((await evaluateRun(trainer, cfg)).accuracy).toBeUndefined();
    } finally {
      trainer.destroy();
    }
  });
});
