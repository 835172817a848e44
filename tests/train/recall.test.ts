// The associative-recall task and its scorer:
// - sequence structure (vocab ranges, distinct keys, non-overlapping pairs, queries at the end, the
//   last target is an answer), answers out of the window (≥ 80% required; the preset makes it 100%,
//   beyond the window-only model's nLayers·(w−1) reach), placement range hit at both ends;
// - the Dataset contract (shift, determinism, held-out stream, exact unigram entropy);
// - the argmax decoding from the fused cross-entropy's in-place output, on the real kernel;
// - scoreRecall on an untrained recall-preset model (counts and the mass check).
import { describe, expect, it } from 'vitest';
import { createArena } from '../../src/gpu/arena';
import { crossEntropyDispatch } from '../../src/kernels/crossentropy';
import { preset } from '../../src/train/presets';
import { RECALL_PRESET, RECALL_TASK } from '../../src/train/recall-preset';
import {
  createRecallDataset,
  generateRecallSequence,
  recallAnswerPositions,
  validateRecallTask,
  recallVocab,
  type RecallTask,
} from '../../src/train/data/recall';
import { createBatch, unigramEntropyOf } from '../../src/train/data/batch';
import { checkAnswerRow, scoreRecall } from '../../src/train/recall-eval';
import { Trainer } from '../../src/train/trainer';
import { IGNORE_TARGET } from '../../src/spec/targets';
import { lossScale } from '../../src/model/plan';
import { randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const T = RECALL_PRESET.model.seqLen;
const W = RECALL_PRESET.model.nsa!.w;
const LAYERS = RECALL_PRESET.model.nLayers;

describe('recall sequences', () => {
  const task = RECALL_TASK;
  const v = recallVocab(task);
  const samples = Array.from({ length: 2000 }, ((r) => () => generateRecallSequence(task, T, r))(rng(11)));

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
    const bad = (patch: Partial<RecallTask>, seqLen = T) => validateRecallTask({ ...task, ...patch }, seqLen).map((i) => `${i.field}: ${i.message}`).join('; ');
    expect(bad({})).toBe('');
    expect(bad({ pairs: 17 })).toMatch(/^pairs: must not exceed keys \(17 > 16\)/);
    expect(bad({ queries: 11 })).toMatch(/^queries: must not exceed pairs \(11 > 10\)/);
    expect(bad({ values: 1 })).toBe('values: must be an integer ≥ 2 (got 1)');
    expect(bad({ minStart: -1 })).toBe('minStart: must be an integer ≥ 0 (got -1)');
    expect(bad({ minDistance: 27 })).toMatch(/^minDistance: minStart 8 and minDistance 27/);
    expect(bad({}, 20)).toMatch(/^pairs: 10 pairs need a pair region of at least 30 tokens; seqLen 20/);
    expect(() => createRecallDataset({ kind: 'recall', ...task, minDistance: 60 }, { batchSize: 2, seqLen: T, seed: 1 })).toThrow(/minDistance: .*minDistance 60/);
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

describe('argmax from the in-place cross-entropy', () => {
  it('checkAnswerRow recovers p(v) and the argmax from dlogits = scale·(p − onehot)', () => {
    const p = [0.1, 0.45, 0.4, 0.05];
    const scale = 1 / 64;
    const row = p.map((x, v) => scale * (x - (v === 2 ? 1 : 0)));
    const c = checkAnswerRow(row, -Math.log(0.4), 2, scale);
    expect(c.correct).toBe(false); // 0.45 beats the target's 0.4 although p(target) < 0.5 either way
    expect(c.bestOther).toBe(1);
    expect(c.pBestOther).toBeCloseTo(0.45, 12);
    expect(c.otherMass).toBeCloseTo(0.6, 12);
    const d = checkAnswerRow(row, -Math.log(0.4), 1, scale); // as if the target were 1: dl[1] now holds p − 1
    // Decoding a row against the wrong target breaks the mass identity: scoreRecall's check flags it.
    expect(Math.abs(d.otherMass - (1 - d.pCorrect))).toBeGreaterThan(0.5);
  });

  it('on the GPU kernel: decoded argmax equals argmax of the logits, p within 1e-6', async () => {
    const gpu = await getGpu();
    const N = 37;
    const V = 48;
    const scale = 1 / N;
    const r = rng(21);
    const logits = new Float32Array(randn(N * V, r, 3));
    const targets = new Int32Array(N);
    for (let n = 0; n < N; n++) targets[n] = Math.floor(r() * V);
    // Half the rows: make the target the argmax, with p(target) < 0.5 in some (the case p > 0.5 would miss).
    for (let n = 0; n < N; n += 2) {
      const row = logits.subarray(n * V, (n + 1) * V);
      row[targets[n]] = Math.max(...row) + (n % 4 === 0 ? 0.05 : 3);
    }
    const arena = createArena(gpu, 'recall.xent', [
      { name: 'logits', bytes: N * V * 4 },
      { name: 'targets', bytes: N * 4 },
      { name: 'losses', bytes: N * 4 },
    ]);
    gpu.write(arena.get('logits'), logits);
    gpu.write(arena.get('targets'), targets);
    const d = await crossEntropyDispatch(gpu, { logits: arena.get('logits'), targets: arena.get('targets'), losses: arena.get('losses'), dlogits: arena.get('logits'), N, V, gradScale: scale });
    gpu.run([d]);
    const dl = await gpu.readF32(arena.get('logits'));
    const losses = await gpu.readF32(arena.get('losses'));
    let lowConfidenceCorrect = 0;
    for (let n = 0; n < N; n++) {
      const row = Array.from(logits.subarray(n * V, (n + 1) * V));
      const m = Math.max(...row);
      const z = row.reduce((a, x) => a + Math.exp(x - m), 0);
      const argmax = row.indexOf(m);
      const c = checkAnswerRow(dl.subarray(n * V, (n + 1) * V), losses[n], targets[n], scale);
      expect(c.correct).toBe(argmax === targets[n]);
      if (c.correct && c.pCorrect < 0.5) lowConfidenceCorrect++;
      expect(Math.abs(c.pCorrect - Math.exp(row[targets[n]] - m) / z)).toBeLessThan(1e-6);
      if (!c.correct) expect(Math.abs(c.pBestOther - Math.exp(m - m) / z)).toBeLessThan(1e-6);
      expect(Math.abs(c.otherMass - (1 - c.pCorrect))).toBeLessThan(1e-5);
    }
    expect(lowConfidenceCorrect).toBeGreaterThan(0); // the cases "p > 0.5" would have scored wrong
    for (const b of arena.buffers) b.destroy();
  });
});

describe('scoreRecall', () => {
  // The tiny dense preset on recall data: the scorer only reads the plan's eval outputs, and these
  // are the pipelines other test files already build (the NSA ones take most of a minute to compile
  // on SwiftShader). The eval CLI scores NSA models through the same code.
  it('untrained model: B·m answers, near-uniform p(value), mass check passes', async () => {
    const gpu = await getGpu();
    const task = RECALL_TASK;
    const cfg = preset('tiny');
    const B = cfg.train.batchSize;
    const ds = createRecallDataset({ kind: 'recall', ...task }, { batchSize: B, seqLen: T, seed: 3 });
    const trainer = await Trainer.create(gpu, cfg, ds);
    try {
      const answers = recallAnswerPositions(T, task.queries);
      const [batch] = ds.validationBatches(1);
      const s = await scoreRecall(trainer, [batch], answers);
      expect(s.answers).toBe(B * task.queries);
      expect(s.accuracy).toBe(s.correct / s.answers);
      // Initial weights (std 0.02): the softmax is close to uniform over the vocabulary.
      const V = cfg.model.vocabSize;
      expect(s.meanPCorrect).toBeGreaterThan(1 / V / 1.5);
      expect(s.meanPCorrect).toBeLessThan(1.5 / V);
      expect(Math.abs(s.answerLoss - Math.log(V))).toBeLessThan(0.3);
      // Row indexing: the per-position losses the plan left behind give the same mean p(value).
      const losses = await gpu.readF32(trainer.plan.acts.get('losses'), B * T);
      // Unscored positions contribute nothing, and the loss is the mean over the answers alone.
      const ignored = Array.from({ length: B * T }, (_, n) => n).filter((n) => batch.targets[n] === IGNORE_TARGET);
      expect(ignored.length).toBe(B * (T - task.queries));
      expect(ignored.every((n) => losses[n] === 0)).toBe(true);
      expect(trainer.plan.shape.scoredPerSequence).toBe(task.queries);
      expect(lossScale(trainer.plan.shape, 'eval')).toBe(1 / (B * task.queries));
      const rows = Array.from({ length: B }, (_, r) => answers.map((t) => r * T + t)).flat();
      const meanP = rows.reduce((a, n) => a + Math.exp(-losses[n]), 0) / rows.length;
      expect(Math.abs(meanP - s.meanPCorrect)).toBeLessThan(1e-12);
      // The logits do not depend on the targets: retarget every answer to the decoded argmax and the
      // accuracy must be exactly 1; to any other token, exactly 0.
      const dl = await gpu.readF32(trainer.plan.acts.get('logits'), B * T * V);
      const argmax = rows.map((n) => {
        const c = checkAnswerRow(dl.subarray(n * V, (n + 1) * V), losses[n], batch.targets[n], lossScale(trainer.plan.shape, 'eval'));
        return c.correct ? batch.targets[n] : c.bestOther;
      });
      const retarget = (f: (a: number) => number) => {
        const b = { tokens: batch.tokens, targets: batch.targets.slice() };
        rows.forEach((n, i) => (b.targets[n] = f(argmax[i])));
        return b;
      };
      expect((await scoreRecall(trainer, [retarget((a) => a)], answers)).accuracy).toBe(1);
      expect((await scoreRecall(trainer, [retarget((a) => (a + 1) % V)], answers)).accuracy).toBe(0);
    } finally {
      trainer.destroy();
    }
  });
});
