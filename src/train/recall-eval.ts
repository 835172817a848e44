// Train a model on the associative-recall task and score it: accuracy = the fraction of held-out
// queries whose most probable next token (argmax) at the answer position is the stored value.
//
// Reading predictions: the plan's eval forward runs the fused cross-entropy in place, so after it
// the logits buffer holds dlogits[n,v] = scale·(softmax(logits[n])_v − [v = target_n]) with
// scale = lossScale(plan.shape, 'eval'), and `losses[n]` = −ln p(target_n). Both are exact functions of the softmax, so
// p(correct) = exp(−loss) and p(v) = dlogits[n,v]/scale for every other v: the full distribution,
// hence the true argmax (softmax is monotone in the logits). The mass of the other tokens is
// checked against 1 − p(correct) on every row, so a change in the plan's scale cannot go unnoticed.
import type { GpuContext } from '../gpu/context';
import { GpuContext as Gpu } from '../gpu/context';
import { buildTokenIndex, tokenIndexLength } from '../kernels/embedding-index';
import { act } from '../model/activations';
import { lossScale } from '../model/plan';
import type { RunConfig } from './config';
import type { Batch } from './datasets';
import { recallAnswerPositions, recallDatasetForRun } from './data/recall';
import { Trainer } from './trainer';
import type { StepMetrics } from './types';

export interface AnswerCheck {
  /** p(target) = exp(−loss). */
  pCorrect: number;
  /** The most probable other token and its probability (−1, 0 when V = 1). */
  bestOther: number;
  pBestOther: number;
  /** Σ_{v ≠ target} p(v) recovered from the row. */
  otherMass: number;
  /** argmax is the target: p(target) > every other p(v) (a tie counts as wrong). */
  correct: boolean;
}

/** Decodes one row of the in-place cross-entropy output (see the file comment). */
export function checkAnswerRow(dlogits: ArrayLike<number>, loss: number, target: number, scale: number): AnswerCheck {
  const pCorrect = Math.exp(-loss);
  let bestOther = -1;
  let pBestOther = 0;
  let otherMass = 0;
  for (let v = 0; v < dlogits.length; v++) {
    if (v === target) continue;
    const p = dlogits[v] / scale;
    otherMass += p;
    if (bestOther < 0 || p > pBestOther) {
      bestOther = v;
      pBestOther = p;
    }
  }
  return { pCorrect, bestOther, pBestOther, otherMass, correct: pCorrect > pBestOther };
}

export interface RecallScore {
  answers: number;
  correct: number;
  accuracy: number;
  /** Mean p(value) at the answer positions. */
  meanPCorrect: number;
  /** Mean cross-entropy (nats) at the answer positions. */
  answerLoss: number;
}

/** Largest |Σ_{v≠t} p(v) − (1 − p(t))| accepted when decoding a row (f32 softmax, V ≤ a few hundred). */
const MASS_TOLERANCE = 1e-4;

/** Scores a trained model on the given batches at the given input positions (same in every row). */
export async function scoreRecall(trainer: Trainer, batches: readonly Batch[], answerPositions: readonly number[]): Promise<RecallScore> {
  await trainer.flush();
  const { gpu, plan } = trainer;
  const { B, T, N } = plan.shape;
  const V = plan.config.vocabSize;
  const scale = lossScale(plan.shape, 'eval'); // the eval forward's gradScale
  const index = new Int32Array(tokenIndexLength(N));
  let answers = 0;
  let correct = 0;
  let pSum = 0;
  let lossSum = 0;
  for (const b of batches) {
    if (b.tokens.length !== N) throw new Error(`scoreRecall: batch holds ${b.tokens.length} tokens, the plan expects ${N}`);
    buildTokenIndex(b.tokens, index);
    gpu.write(plan.acts.get(act.tokens(0)), b.tokens);
    gpu.write(plan.acts.get(act.targets(0)), b.targets);
    gpu.write(plan.acts.get(act.tokenIndex(0)), index);
    const enc = gpu.device.createCommandEncoder({ label: 'recall.eval' });
    const pass = enc.beginComputePass();
    Gpu.encode(pass, plan.evalForward);
    pass.end();
    gpu.submit([enc.finish()]);
    const dlogits = await gpu.readF32(plan.acts.get('logits'), N * V);
    const losses = await gpu.readF32(plan.acts.get('losses'), N);
    for (let r = 0; r < B; r++) {
      for (const t of answerPositions) {
        const n = r * T + t;
        const target = b.targets[n];
        const c = checkAnswerRow(dlogits.subarray(n * V, (n + 1) * V), losses[n], target, scale);
        if (!(Math.abs(c.otherMass - (1 - c.pCorrect)) <= MASS_TOLERANCE)) {
          throw new Error(`scoreRecall: row ${n} decodes to other-token mass ${c.otherMass} but 1 − p(target) = ${1 - c.pCorrect}; the eval forward's loss scale is not ${scale}`);
        }
        answers++;
        if (c.correct) correct++;
        pSum += c.pCorrect;
        lossSum += losses[n];
      }
    }
  }
  return { answers, correct, accuracy: correct / answers, meanPCorrect: pSum / answers, answerLoss: lossSum / answers };
}

/**
 * Which attention the model uses: NSA with learned gates; NSA forced to one branch (win, cmp, sel:
 * the others' gates 0); NSA without its selected branch (nosel: gates frozen at cmp 1, sel 0,
 * win 1); or dense attention.
 */
export type RecallMode = 'nsa' | 'win' | 'cmp' | 'sel' | 'nosel' | 'dense';
export const RECALL_MODES: readonly RecallMode[] = ['nsa', 'win', 'cmp', 'sel', 'nosel', 'dense'];

/** The run config for one mode: the base's NSA settings with the gate ablation, or dense attention. */
export function configForMode(base: RunConfig, mode: RecallMode): RunConfig {
  const c = structuredClone(base);
  if (mode === 'dense') {
    c.model.attention = 'dense';
    return c;
  }
  if (!c.model.nsa) throw new Error(`recall mode '${mode}' needs model.nsa settings`);
  c.model.attention = 'nsa';
  c.model.nsa.gates =
    mode === 'nsa' ? { kind: 'none' } : mode === 'nosel' ? { kind: 'freeze', value: [1, 0, 1] } : { kind: 'force', branch: mode };
  return c;
}

export interface RecallRunOptions {
  /** Held-out batches scored at the end. */
  evalBatches: number;
  /** Also score every this many steps (0: only at the end), on the same held-out batches. */
  evalEvery?: number;
  onStep?(m: StepMetrics): void;
  onEval?(step: number, s: RecallScore): void;
}

export interface RecallRunResult {
  steps: number;
  /** Wall-clock time to build the model (pipeline compilation dominates on SwiftShader). */
  buildMs: number;
  /** Wall-clock training time (model build and every scoring excluded). */
  trainMs: number;
  /** Training loss of the last step (the mean over its answers: the recall task scores only those). */
  finalLoss: number;
  score: RecallScore;
}

/** Trains `config` from its seed on its recall task (config.data.recall) for config.train.steps, then scores held-out queries. */
export async function trainAndScoreRecall(gpu: GpuContext, config: RunConfig, opts: RecallRunOptions): Promise<RecallRunResult> {
  const dataset = recallDatasetForRun(config); // checks data.source and data.recall
  const T = config.model.seqLen;
  const queries = config.data.recall!.queries;
  const tBuild = performance.now();
  const trainer = await Trainer.create(gpu, config, dataset);
  const buildMs = performance.now() - tBuild;
  try {
    const answers = recallAnswerPositions(T, queries);
    const held = dataset.validationBatches(opts.evalBatches);
    const every = opts.evalEvery ?? 0;
    let evalMs = 0;
    const t0 = performance.now();
    let last: StepMetrics | null = null;
    for (let i = 0; i < config.train.steps; i++) {
      const m = await trainer.step();
      if (m) {
        last = m;
        opts.onStep?.(m);
      }
      if (every > 0 && (i + 1) % every === 0 && i + 1 < config.train.steps) {
        const e0 = performance.now();
        const s = await scoreRecall(trainer, held, answers);
        evalMs += performance.now() - e0;
        opts.onEval?.(i, s);
      }
    }
    const tail = await trainer.flush();
    if (tail && tail !== last) opts.onStep?.(tail);
    const trainMs = performance.now() - t0 - evalMs;
    const score = await scoreRecall(trainer, held, answers);
    return { steps: config.train.steps, buildMs, trainMs, finalLoss: tail?.loss ?? Number.NaN, score };
  } finally {
    trainer.destroy();
  }
}
