// One training run on the GPU: the plan, its data, the learning-rate schedule and the pipelined
// readback. One optimizer step is one command buffer and one submit; the loss, gradient norm and
// NSA statistics come back through a small staging ring one step late, so the GPU always has the
// next step queued while JavaScript waits. step() and flush() return each step's metrics exactly
// once, in order; src/train/loop.ts is the loop every caller runs on top of them.
import { type ConfigIssue, InvalidConfigError } from '../definitions/config-issue';
import type { GpuContext } from '../gpu/context';
import { tokenIndexLength } from '../kernels/embedding-index';
import type { NsaAttnVariant } from '../kernels/nsa-attention';
import type { NsaStats } from '../kernels/nsa-stats';
import { initParams } from '../model/init';
import { ModelPlan, type NamedTensors } from '../model/plan';
import { encodeCheckpoint, type TrainerState, type TrainingCheckpoint } from './checkpoint/checkpoint';
import { type RunConfig, validateRunConfig } from './config';
import type { Batch, Dataset } from './data/datasets';
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
}

export class Trainer {
  private stepCount = 0;
  private batchesDrawn = 0;
  private readonly pending: Pending[] = [];
  private readonly staging: GPUBuffer[];
  private readonly evalStaging: GPUBuffer;
  private readonly batches: Batch[];
  private readonly tokenIndices: Int32Array[];
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
  ) {
    const { N, gradAccum } = plan.shape;
    this.stagingBytes = plan.readbackBytes;
    this.staging = Array.from({ length: STAGING_SLOTS }, (_, i) =>
      gpu.createBuffer({ label: `staging#${i}`, size: this.stagingBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    );
    this.evalStaging = gpu.createBuffer({ label: 'staging.eval', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.batches = Array.from({ length: gradAccum }, () => ({ tokens: new Int32Array(N), targets: new Int32Array(N) }));
    this.tokenIndices = Array.from({ length: gradAccum }, () => new Int32Array(tokenIndexLength(N)));
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
    const plan = await ModelPlan.build(gpu, config.model, {
      batchSize: t.batchSize,
      gradAccum: t.gradAccum,
      optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
      scoredPerSequence: dataset.scoredPerSequence,
      nsaKernels: hooks.nsaKernels,
    });
    plan.importParams(initParams(plan.specs, t.seed));
    const trainer = new Trainer(gpu, config, plan, dataset, hooks);
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
    trainer.plan.importParams(from.params);
    trainer.plan.importOptimizerState({ m: from.adamM, v: from.adamV });
    // O(1) whatever the cursor: the stream jumps to batch batchesDrawn (src/train/data/stream.ts).
    dataset.seekTrain(batchesDrawn);
    trainer.batchesDrawn = batchesDrawn;
    trainer.stepCount = stepsDone;
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
    const { m, v } = await this.plan.exportOptimizerState();
    return { stepsDone: this.stepCount, batchesDrawn: this.batchesDrawn, params: await this.plan.exportParams(), adamM: m, adamV: v };
  }

  get stepsDone(): number {
    return this.stepCount;
  }

  get gpuBytes(): number {
    return this.plan.gpuBytes + STAGING_SLOTS * this.stagingBytes + 16;
  }

  /** Tokens processed per optimizer step. */
  get tokensPerStep(): number {
    return this.plan.shape.N * this.plan.shape.gradAccum;
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
    const { gpu, plan } = this;
    const step = this.stepCount;
    this.phase = 'data';
    for (let m = 0; m < plan.shape.gradAccum; m++) {
      const b = this.batches[m];
      this.dataset.nextTrainBatch(b);
      this.batchesDrawn++;
      plan.writeBatch(m, b.tokens, b.targets, this.tokenIndices[m]);
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
    this.pending.push({ step, lr, slot, mapped });
    this.stepCount++;
    return this.pending.length > 1 ? [await this.resolve(this.pending.shift()!)] : [];
  }

  private async resolve(p: Pending): Promise<StepMetrics> {
    await p.mapped;
    const buf = this.staging[p.slot];
    const raw = buf.getMappedRange(0, this.stagingBytes).slice(0);
    buf.unmap();
    const scalars = this.plan.decodeStepReadback(raw);
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
    const { gpu, plan } = this;
    const batches = this.dataset.validationBatches(this.config.train.evalBatches);
    if (batches.length === 0) throw new Error(`dataset ${this.dataset.name} has no validation split`);
    this.beat('eval', `evaluating ${batches.length} batches`);
    const idx = this.tokenIndices[0];
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
    return this.plan.exportParams();
  }

  destroy(): void {
    for (const b of this.staging) b.destroy();
    this.evalStaging.destroy();
    this.plan.destroy();
  }
}
