// One training run on the GPU: the plan, its data, the learning-rate schedule and the pipelined
// readback. One optimizer step is one command buffer and one submit; the loss, gradient norm and
// NSA statistics come back through a small staging ring one step late, so the GPU always has the
// next step queued while JavaScript waits. step() and flush() return each step's metrics exactly
// once, in order; src/train/loop.ts is the loop every caller runs on top of them.
//
// A sequence-length warm-up (train.shortSeqSteps, shortSeqLen) trains its steps on a second plan
// built at the short length; at the first full-length step the weights and AdamW moments move to
// the full plan (one read and one write of each tensor, once per run) and the short plan is freed.
// Evaluations always run on the full plan (the weights copied there first during the warm-up).
import { type ConfigIssue, InvalidConfigError } from '../definitions/config-issue';
import type { GpuContext } from '../gpu/context';
import { tokenIndexLength } from '../kernels/embedding-index';
import type { NsaAttnVariant } from '../kernels/nsa-attention';
import type { NsaStats } from '../kernels/nsa-stats';
import { nsaStatsMaxDistance } from '../model/activations';
import { initParams } from '../model/init';
import { ModelPlan, type NamedTensors } from '../model/plan';
import { encodeCheckpoint, type TrainerState, type TrainingCheckpoint } from './checkpoint/checkpoint';
import { type RunConfig, shortSeqConfig, shortSeqSteps, validateRunConfig } from './config';
import type { Batch, Dataset } from './data/datasets';
import { isShortSeqDataset } from './data/short-seq';
import { trainCursorProblem } from './data/stream';
import { DivergenceGuard, divergenceSettings } from './divergence';
import { learningRate, type LrSchedule } from './lr-schedule';
import type { EvalMetrics, Heartbeat, NsaStepStats, StepMetrics, TrainerPhase } from './types';

export interface TrainerHooks {
  onHeartbeat?(b: Heartbeat): void;
  /** The NSA branch attention kernels (ModelPlan's nsaKernels); default by adapter. */
  nsaKernels?: NsaAttnVariant;
}

/**
 * A step produced a non-finite loss or gradient norm. The run stops; its state now is not written
 * to a checkpoint (the last good checkpoint stands). (A loss that stays finite but far too high
 * stops the run with DivergenceError, src/train/divergence.ts.)
 */
export class NonFiniteError extends Error {
  override readonly name = 'NonFiniteError';
  constructor(
    readonly step: number,
    readonly loss: number,
    readonly gradNorm: number,
  ) {
    super(
      `step ${step}: loss ${loss}, grad norm ${gradNorm} — non-finite; the run stops and this state is not checkpointed. ` +
        'Lower the learning rate or enable gradient clipping, then start a new run.',
    );
  }
}

/** The GPU produced selections that break docs/nsa-spec.md's rules (counted by the stats kernel). */
export class InvalidSelectionError extends Error {
  override readonly name = 'InvalidSelectionError';
  constructor(
    readonly step: number,
    readonly invalidRows: number,
  ) {
    super(`step ${step}: ${invalidRows} invalid NSA selection rows (a kernel bug: selections must satisfy the spec's top-n rules)`);
  }
}

const STAGING_SLOTS = 3;

/**
 * Why a checkpoint's state cannot continue a run of this config, each naming its field
 * (state.stepsDone, state.batchesDrawn): stepsDone an integer in [0, train.steps]; batchesDrawn an
 * integer in [0, 2^53] and exactly stepsDone · train.gradAccum (every step draws gradAccum batches,
 * and checkpoints are written between steps), so a cursor no run of this config can have reached is
 * refused before any GPU work.
 */
export function resumeCursorIssues(config: RunConfig, state: TrainerState): ConfigIssue[] {
  const { stepsDone, batchesDrawn } = state;
  const issues: ConfigIssue[] = [];
  if (!(Number.isInteger(stepsDone) && stepsDone >= 0 && stepsDone <= config.train.steps))
    issues.push({
      field: 'state.stepsDone',
      message: `must be an integer in [0, train.steps = ${config.train.steps}] (got ${String(stepsDone)})`,
    });
  const problem = trainCursorProblem('batchesDrawn', batchesDrawn);
  if (problem) issues.push({ field: 'state.batchesDrawn', message: problem });
  else if (!issues.length && batchesDrawn !== stepsDone * config.train.gradAccum)
    issues.push({
      field: 'state.batchesDrawn',
      message: `is ${batchesDrawn}, but ${stepsDone} steps of train.gradAccum ${config.train.gradAccum} draw ${stepsDone * config.train.gradAccum} batches`,
    });
  return issues;
}

/**
 * Everything a run needs to continue exactly where it stopped: the learning-rate position is
 * stepsDone, the data cursor is the number of training batches drawn (datasets are seeded and
 * deterministic; a resumed run's streams jump straight to that batch), and the model and AdamW state by name.
 */
export interface TrainerResumeState extends TrainerState {
  params: Map<string, Float32Array>;
  adamM: Map<string, Float32Array>;
  adamV: Map<string, Float32Array>;
}

interface Pending {
  step: number;
  lr: number;
  slot: number;
  mapped: Promise<void>;
  /** The plan that encoded the step (its readback layout). */
  plan: ModelPlan;
}

/** One plan's batch arrays: gradAccum micro-batches of B·T tokens and their embedding indices. */
interface PlanBatches {
  batches: Batch[];
  tokenIndices: Int32Array[];
}

function planBatches(plan: ModelPlan): PlanBatches {
  const { N, gradAccum } = plan.shape;
  return {
    batches: Array.from({ length: gradAccum }, () => ({ tokens: new Int32Array(N), targets: new Int32Array(N) })),
    tokenIndices: Array.from({ length: gradAccum }, () => new Int32Array(tokenIndexLength(N))),
  };
}

export class Trainer {
  private stepCount = 0;
  private batchesDrawn = 0;
  private readonly pending: Pending[] = [];
  private readonly staging: GPUBuffer[];
  private readonly evalStaging: GPUBuffer;
  private readonly io: PlanBatches;
  /** The sequence-length warm-up's plan and arrays while its steps last (null: none, or over). */
  private short: { plan: ModelPlan; io: PlanBatches } | null;
  private readonly schedule: LrSchedule;
  private readonly startedAt = performance.now();
  private lastResolvedAt = performance.now();
  private lastMetrics: StepMetrics | null = null;
  private phase: TrainerPhase = 'init';
  private readonly stagingBytes: number;
  private readonly divergence: DivergenceGuard;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: RunConfig,
    readonly plan: ModelPlan,
    readonly dataset: Dataset,
    private readonly hooks: TrainerHooks,
    shortPlan: ModelPlan | null,
  ) {
    this.short = shortPlan && { plan: shortPlan, io: planBatches(shortPlan) };
    this.stagingBytes = Math.max(plan.readbackBytes, shortPlan?.readbackBytes ?? 0);
    this.staging = Array.from({ length: STAGING_SLOTS }, (_, i) =>
      gpu.createBuffer({ label: `staging#${i}`, size: this.stagingBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    );
    this.evalStaging = gpu.createBuffer({ label: 'staging.eval', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.io = planBatches(plan);
    const t = config.train;
    this.divergence = new DivergenceGuard(divergenceSettings(t, config.model.vocabSize));
    this.schedule = {
      lrMax: t.lrMax,
      lrMin: t.lrMin,
      warmupSteps: t.warmupSteps,
      totalSteps: t.steps,
      warmupStartFraction: t.warmupStartFraction,
    };
  }

  /** Validates everything before any GPU work, then builds the plan and uploads seeded weights. */
  static async create(gpu: GpuContext, config: RunConfig, dataset: Dataset, hooks: TrainerHooks = {}): Promise<Trainer> {
    const errs = validateRunConfig(config);
    if (dataset.vocabSize > config.model.vocabSize)
      errs.push({ field: 'model.vocabSize', message: `must be ≥ the dataset's vocabulary (${dataset.vocabSize})` });
    if (errs.length) throw new InvalidConfigError('invalid run config', errs);
    const t = config.train;
    const warm = isShortSeqDataset(dataset) ? dataset : null;
    if (shortSeqSteps(t) !== (warm ? warm.shortBatches / t.gradAccum : 0) || (warm && warm.shortSeqLen !== t.shortSeqLen))
      throw new Error(
        `Trainer.create: the dataset's sequence-length warm-up (${warm ? `${warm.shortBatches} batches at ${warm.shortSeqLen}` : 'none'}) is not the config's ` +
          `(train.shortSeqSteps ${t.shortSeqSteps ?? 0}, shortSeqLen ${t.shortSeqLen ?? '-'}): build it with withShortSeq (src/train/data/short-seq.ts)`,
      );
    const build = (c: RunConfig, scoredPerSequence: number | undefined) =>
      ModelPlan.build(gpu, c.model, {
        batchSize: t.batchSize,
        gradAccum: t.gradAccum,
        optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
        scoredPerSequence,
        nsaKernels: hooks.nsaKernels,
      });
    const plan = await build(config, dataset.scoredPerSequence);
    // The warm-up's loss divides by its own answers per sequence (fewer with train.shortSeqPairs).
    const shortPlan = warm ? await build(shortSeqConfig(config), warm.shortScoredPerSequence) : null;
    const trainer = new Trainer(gpu, config, plan, dataset, hooks, shortPlan);
    trainer.trainPlan.importParams(initParams(plan.specs, t.seed));
    trainer.beat(
      'init',
      `model ready: ${plan.specs.length} tensors, ${(plan.gpuBytes / 2 ** 20).toFixed(1)} MiB on ${gpu.adapter.architecture}`,
    );
    trainer.phase = 'idle';
    return trainer;
  }

  /**
   * A trainer that continues a run from `from` (a checkpoint of the same config): the next step
   * is step from.stepsDone with the same learning rate, data and optimizer state as the run that
   * wrote it, so every later step matches the uninterrupted run bit for bit.
   */
  static async resume(
    gpu: GpuContext,
    config: RunConfig,
    dataset: Dataset,
    from: TrainerResumeState,
    hooks: TrainerHooks = {},
  ): Promise<Trainer> {
    const { stepsDone, batchesDrawn } = from;
    const cursor = resumeCursorIssues(config, from);
    if (cursor.length) throw new InvalidConfigError('resume: the checkpoint state cannot continue this run', cursor);
    const trainer = await Trainer.create(gpu, config, dataset, hooks);
    trainer.stepCount = stepsDone;
    if (stepsDone >= shortSeqSteps(config.train)) trainer.endShortSeq(); // resumed past the warm-up
    trainer.trainPlan.importParams(from.params);
    trainer.trainPlan.importOptimizerState({ m: from.adamM, v: from.adamV });
    // O(1) whatever the cursor: the stream jumps to batch batchesDrawn (src/train/data/stream.ts).
    dataset.seekTrain(batchesDrawn);
    trainer.batchesDrawn = batchesDrawn;
    trainer.beat('init', `resumed at step ${stepsDone} (${batchesDrawn} batches drawn)`);
    trainer.phase = 'idle';
    return trainer;
  }

  /** Continues the run a decoded checkpoint file holds (its config, step, data cursor, weights and moments). */
  static async fromCheckpoint(gpu: GpuContext, from: TrainingCheckpoint, dataset: Dataset, hooks: TrainerHooks = {}): Promise<Trainer> {
    const state = { ...from.state, params: from.params, adamM: from.adamM, adamV: from.adamV };
    const trainer = await Trainer.resume(gpu, from.config, dataset, state, hooks);
    trainer.divergence.replay(from.metrics);
    return trainer;
  }

  /**
   * This run as a checkpoint file (the CLI's and the page's format) with the metrics and
   * evaluations so far. Call it with no step in flight, as resumeState.
   */
  async checkpoint(o: {
    metrics: StepMetrics[];
    evals: EvalMetrics[];
    reason: string;
    savedAt?: Date;
    file?: string;
  }): Promise<Uint8Array> {
    const { stepsDone, batchesDrawn, params, adamM, adamV } = await this.resumeState();
    // A parameter or moment holding NaN/±Infinity is refused here (NonFiniteTensorError naming o.file, the tensor and index).
    return encodeCheckpoint(
      {
        config: this.config,
        state: { stepsDone, batchesDrawn },
        params,
        adamM,
        adamV,
        metrics: o.metrics,
        evals: o.evals,
        reason: o.reason,
        savedAt: (o.savedAt ?? new Date()).toISOString(),
      },
      { file: o.file },
    );
  }

  /** The state to write into a checkpoint. Call it with no step in flight (at a loop checkpoint or after the loop). */
  async resumeState(): Promise<TrainerResumeState> {
    if (this.pending.length) throw new Error(`resumeState: ${this.pending.length} steps in flight; flush() first`);
    const plan = this.trainPlan;
    const { m, v } = await plan.exportOptimizerState();
    return { stepsDone: this.stepCount, batchesDrawn: this.batchesDrawn, params: await plan.exportParams(), adamM: m, adamV: v };
  }

  /** The plan the next step trains on: the warm-up's short plan while its steps last, else `plan`. */
  get trainPlan(): ModelPlan {
    return this.short?.plan ?? this.plan;
  }

  /** True while the sequence-length warm-up's steps last (training at train.shortSeqLen). */
  get inShortSeq(): boolean {
    return this.short !== null;
  }

  /**
   * The full-length plan holding the current weights, for a forward on held-out batches (scoring,
   * evaluation): during the warm-up the weights are copied there first. Call it with no step in flight.
   */
  async evalPlan(): Promise<ModelPlan> {
    if (this.pending.length) throw new Error(`evalPlan: ${this.pending.length} steps in flight; flush() first`);
    if (this.short) this.plan.importParams(await this.short.plan.exportParams());
    return this.plan;
  }

  /** Frees the warm-up's plan (no-op without one); its state must have been moved (or be unused). */
  private endShortSeq(): void {
    this.short?.plan.destroy();
    this.short = null;
  }

  /** The warm-up is over: weights and AdamW moments move to the full plan (no step in flight). */
  private async leaveShortSeq(): Promise<void> {
    const from = this.short!.plan;
    const { m, v } = await from.exportOptimizerState();
    this.plan.importParams(await from.exportParams());
    this.plan.importOptimizerState({ m, v });
    this.endShortSeq();
    this.beat('init', `sequence-length warm-up over at step ${this.stepCount}: training at ${this.plan.shape.T} tokens`);
  }

  get stepsDone(): number {
    return this.stepCount;
  }

  get gpuBytes(): number {
    return this.plan.gpuBytes + (this.short?.plan.gpuBytes ?? 0) + STAGING_SLOTS * this.stagingBytes + 16;
  }

  /** Tokens processed per optimizer step (the warm-up's shorter sequences while it lasts). */
  get tokensPerStep(): number {
    const { N, gradAccum } = this.trainPlan.shape;
    return N * gradAccum;
  }

  private beat(phase: TrainerPhase, msg: string, m: StepMetrics | null = this.lastMetrics): void {
    this.phase = phase;
    if (!this.hooks.onHeartbeat) return;
    const ts = Date.now();
    this.hooks.onHeartbeat({
      ts,
      iso: new Date(ts).toISOString(),
      step: m?.step ?? this.stepCount,
      msg,
      phase,
      loss: m?.loss ?? null,
      toks_per_s: m?.tokensPerSecond ?? null,
      lr: m?.lr ?? null,
      grad_norm: m?.gradNorm ?? null,
      gpu_mem_bytes: this.gpuBytes,
    });
  }

  get currentPhase(): TrainerPhase {
    return this.phase;
  }

  /** Runs one optimizer step (one submit). Resolves with the metrics that became ready: the previous step's, or none. */
  async step(): Promise<StepMetrics[]> {
    const { gpu } = this;
    const step = this.stepCount;
    // The warm-up's last step done: every step in flight is resolved before its state moves.
    let ready: StepMetrics[] = [];
    if (this.short && step >= shortSeqSteps(this.config.train)) {
      ready = await this.flush();
      await this.leaveShortSeq();
    }
    const plan = this.trainPlan;
    const io = this.short?.io ?? this.io;
    this.phase = 'data';
    for (let m = 0; m < plan.shape.gradAccum; m++) {
      const b = io.batches[m];
      this.dataset.nextTrainBatch(b);
      this.batchesDrawn++;
      plan.writeBatch(m, b.tokens, b.targets, io.tokenIndices[m]);
    }
    this.phase = 'step';
    const lr = learningRate(this.schedule, step);
    const slot = step % STAGING_SLOTS;
    const enc = gpu.device.createCommandEncoder({ label: `step ${step}` });
    plan.encodeTrainStep(enc, lr, step + 1);
    plan.encodeStepReadback(enc, this.staging[slot]);
    gpu.submit([enc.finish()]);
    const mapped = this.staging[slot].mapAsync(GPUMapMode.READ);
    mapped.catch(() => {}); // destroy() with a step in flight aborts the map: not an unhandled rejection
    this.pending.push({ step, lr, slot, mapped, plan });
    this.stepCount++;
    return this.pending.length > 1 ? [...ready, await this.resolve(this.pending.shift()!)] : ready;
  }

  private async resolve(p: Pending): Promise<StepMetrics> {
    await p.mapped;
    const buf = this.staging[p.slot];
    const raw = buf.getMappedRange(0, this.stagingBytes).slice(0);
    buf.unmap();
    const scalars = p.plan.decodeStepReadback(raw);
    const now = performance.now();
    const stepMs = now - this.lastResolvedAt;
    this.lastResolvedAt = now;
    const m: StepMetrics = {
      step: p.step,
      loss: scalars.loss,
      lr: p.lr,
      gradNorm: scalars.gradNorm,
      tokensPerSecond: this.tokensPerStep / (stepMs / 1000),
      stepMs,
      elapsedMs: now - this.startedAt,
    };
    if (scalars.nsa) m.nsa = this.summariseNsa(scalars.nsa);
    // A warm-up step's selections reach fewer blocks back: its histogram has the full length's bins,
    // the distances a shorter sequence cannot reach at 0 (metrics keep one shape through the run).
    if (m.nsa && p.plan !== this.plan) {
      const bins = nsaStatsMaxDistance(this.plan.config) + 1;
      m.nsa.histogram = Array.from({ length: bins }, (_, k) => m.nsa!.histogram[k] ?? 0);
    }
    if (scalars.indexLoss !== undefined) m.indexLoss = scalars.indexLoss;
    this.lastMetrics = m;
    if (!Number.isFinite(m.loss) || !Number.isFinite(m.gradNorm)) {
      const e = new NonFiniteError(p.step, m.loss, m.gradNorm);
      this.beat('error', e.message, m);
      throw e;
    }
    if (m.nsa && m.nsa.invalid > 0) {
      const e = new InvalidSelectionError(p.step, m.nsa.invalid);
      this.beat('error', e.message, m);
      throw e;
    }
    try {
      this.divergence.observe(p.step, m.loss);
    } catch (e) {
      this.beat('error', (e as Error).message, m);
      throw e;
    }
    this.beat('step', `step ${p.step}`, m);
    return m;
  }

  /** Layer statistics → the step's NSA summary (gate means and keys per query averaged over layers, histograms summed). */
  private summariseNsa(perLayer: NsaStats[]): NsaStepStats {
    const L = perLayer.length;
    const gateMean = [0, 1, 2].map((c) => perLayer.reduce((a, s) => a + s.gateMean[c], 0) / L) as [number, number, number];
    const histogram = perLayer[0].histogram.map((_, k) => perLayer.reduce((a, s) => a + s.histogram[k], 0));
    return {
      gateMean,
      histogram,
      invalid: perLayer.reduce((a, s) => a + s.invalid, 0),
      keysPerQuery: [0, 1, 2].map((c) => perLayer.reduce((a, s) => a + s.keysPerQuery[c], 0) / L) as [number, number, number],
      perLayer: perLayer.map((s) => ({ gateMean: s.gateMean, invalid: s.invalid })),
    };
  }

  /** Waits for the GPU; resolves with the metrics of every step not yet returned (in order). */
  async flush(): Promise<StepMetrics[]> {
    const out: StepMetrics[] = [];
    while (this.pending.length) out.push(await this.resolve(this.pending.shift()!));
    return out;
  }

  /** Steps submitted whose metrics have not been returned yet. */
  get stepsInFlight(): number {
    return this.pending.length;
  }

  /** The metrics of the last step resolved (null before the first). */
  get lastStepMetrics(): StepMetrics | null {
    return this.lastMetrics;
  }

  /**
   * Mean loss over the dataset's fixed validation batches (micro-batch 0's input slots). Call it
   * with the GPU flushed (the loop's checkpoint events are): it throws if steps are in flight, so no
   * step's metrics can be lost to it.
   */
  async evaluate(): Promise<EvalMetrics> {
    if (this.pending.length)
      throw new Error(`evaluate: ${this.pending.length} steps in flight; flush() first so their metrics are not lost`);
    const { gpu } = this;
    const plan = await this.evalPlan();
    const batches = this.dataset.validationBatches(this.config.train.evalBatches);
    if (batches.length === 0) throw new Error(`dataset ${this.dataset.name} has no validation split`);
    this.beat('eval', `evaluating ${batches.length} batches`);
    const idx = this.io.tokenIndices[0];
    let total = 0;
    for (const b of batches) {
      plan.writeBatch(0, b.tokens, b.targets, idx);
      const enc = gpu.device.createCommandEncoder({ label: 'eval' });
      plan.encodeEval(enc, this.stepCount);
      plan.encodeEvalReadback(enc, this.evalStaging);
      gpu.submit([enc.finish()]);
      await this.evalStaging.mapAsync(GPUMapMode.READ);
      total += new Float32Array(this.evalStaging.getMappedRange(0, 4))[0];
      this.evalStaging.unmap();
    }
    const r = { step: this.stepCount, valLoss: total / batches.length };
    this.beat('eval', `val loss ${r.valLoss.toFixed(4)}`);
    this.phase = 'idle';
    return r;
  }

  /** Current parameters by name (checkpoints, generation, tests). */
  readParams(): Promise<NamedTensors> {
    return this.trainPlan.exportParams();
  }

  destroy(): void {
    for (const b of this.staging) b.destroy();
    this.evalStaging.destroy();
    this.endShortSeq();
    this.plan.destroy();
  }
}
