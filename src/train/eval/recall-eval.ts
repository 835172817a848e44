// Train a model on a task (associative recall, or passkey retrieval) and score it: accuracy = the
// fraction of held-out answers whose most probable next token (argmax) at the answer position is
// the stored value (recall) or passkey digit (passkey).
//
// Predictions come from the plan's probabilities (a forward to the logits, softmax per row): the
// full distribution, so the argmax is the true one and p(answer) is read directly; the tally is
// src/train/eval/answer-score.ts.
import { snapshotSelectionOf } from '../../definitions/selection-snapshot';
import type { GpuContext } from '../../gpu/context';
import { tokenIndexLength } from '../../kernels/embedding-index';
import type { RunConfig } from '../config';
import type { Batch, Dataset } from '../data/datasets';
import { passkeyDatasetForRun } from '../data/passkey';
import { recallDatasetForRun } from '../data/recall';
import { withShortSeq } from '../data/short-seq';
import { trainingLoop } from '../loop';
import { Trainer } from '../trainer';
import type { StepMetrics } from '../types';
import { type AnswerScore, AnswerTally } from './answer-score';
import { answerSources, type NeedleScore, NeedleTally } from './needle-read';

/**
 * Per answer token, plus whole sequences (every answer right: the whole passkey); for a model with a
 * selection (NSA, MoBA, DSA), the routing of its answers (needle-read.ts).
 */
export type RecallScore = AnswerScore & { needle?: NeedleScore };

/**
 * Scores a trained model on the given task batches at their answers (each row's targets that are
 * not IGNORE_TARGET). Call it with no step in flight (at a training loop's checkpoint, or after
 * the loop ended).
 */
export async function scoreRecall(trainer: Trainer, batches: readonly Batch[]): Promise<RecallScore> {
  if (trainer.stepsInFlight > 0)
    throw new Error(`scoreRecall: ${trainer.stepsInFlight} steps in flight; score at a checkpoint of the training loop`);
  const plan = await trainer.evalPlan(); // the full-length plan with the current weights
  const { B, T, N } = plan.shape;
  const V = plan.config.vocabSize;
  const index = new Int32Array(tokenIndexLength(N));
  const tally = new AnswerTally();
  // A model with a selection: its units (blocks of lSel positions; DSA: tokens) and entries per row.
  const routed = snapshotSelectionOf(plan.config);
  const L = plan.config.nLayers;
  const needles = routed && { tally: new NeedleTally(L), perRow: plan.config.nKvGroups * routed.cfg.nSel, block: routed.cfg.lSel };
  for (const b of batches) {
    if (b.tokens.length !== N) throw new Error(`scoreRecall: batch holds ${b.tokens.length} tokens, the plan expects ${N}`);
    plan.writeBatch(0, b.tokens, b.targets, index);
    const probs = await plan.readProbabilities();
    const right = tally.add(probs, b.targets, { B, T, V });
    if (needles) {
      // The activations hold this batch's forward: every layer's selection of all B·T rows.
      const selections = await Promise.all(Array.from({ length: L }, (_, l) => plan.readSelectedUnits(l, N)));
      needles.tally.add(selections, needles.perRow, answerSources(b.tokens, b.targets, B, T), needles.block, right);
    }
  }
  return { ...tally.score(), ...(needles && { needle: needles.tally.score() }) };
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
  /** Stop after the first of those scores whose answer accuracy is at least this (early stopping). */
  stopAt?: number;
  onStep?(m: StepMetrics): void;
  onEval?(step: number, s: RecallScore): void;
}

export interface RecallRunResult {
  /** Steps trained: config.train.steps, or fewer when stopAt ended the run. */
  steps: number;
  /** Wall-clock time to build the model (pipeline compilation dominates on SwiftShader). */
  buildMs: number;
  /** Wall-clock training time (model build and every scoring excluded). */
  trainMs: number;
  /** Training loss of the last step (the mean over its answers: the task scores only those). */
  finalLoss: number;
  score: RecallScore;
}

/** The task dataset of a run (checks data.source and its task), or an error for text data. */
export function taskDatasetForRun(config: RunConfig): Dataset {
  // With a sequence-length warm-up: the task at both lengths (src/train/data/short-seq.ts).
  return withShortSeq(config, (c) => (c.data.source === 'passkey' ? passkeyDatasetForRun(c) : recallDatasetForRun(c)));
}

/**
 * Trains `config` from its seed on its task (config.data.recall or config.data.passkey) for
 * config.train.steps, then scores held-out answers.
 */
export async function trainAndScoreRecall(gpu: GpuContext, config: RunConfig, opts: RecallRunOptions): Promise<RecallRunResult> {
  const dataset = taskDatasetForRun(config); // checks data.source and its task
  const tBuild = performance.now();
  const trainer = await Trainer.create(gpu, config, dataset);
  const buildMs = performance.now() - tBuild;
  try {
    const held = dataset.validationBatches(opts.evalBatches);
    const every = opts.evalEvery ?? 0;
    const steps = config.train.steps;
    let evalMs = 0;
    const t0 = performance.now();
    let last: StepMetrics | null = null;
    let stopped: { steps: number; score: RecallScore } | null = null;
    const loop = trainingLoop(trainer, { until: steps, checkpointAfter: (n) => every > 0 && n % every === 0 && n < steps });
    for await (const e of loop) {
      if (e.kind === 'step') {
        last = e.metrics;
        opts.onStep?.(e.metrics);
      } else {
        const e0 = performance.now();
        const s = await scoreRecall(trainer, held);
        evalMs += performance.now() - e0;
        opts.onEval?.(e.stepsDone - 1, s);
        if (opts.stopAt !== undefined && s.accuracy >= opts.stopAt) {
          stopped = { steps: e.stepsDone, score: s };
          break;
        }
      }
    }
    const trainMs = performance.now() - t0 - evalMs;
    const score = stopped?.score ?? (await scoreRecall(trainer, held));
    return { steps: stopped?.steps ?? steps, buildMs, trainMs, finalLoss: last?.loss ?? Number.NaN, score };
  } finally {
    trainer.destroy();
  }
}
