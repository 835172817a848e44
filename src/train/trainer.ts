// The training loop core shared by the Node CLI and the page's worker. One optimizer step is one
// command buffer and one submit; the loss and gradient norm come back through a small staging
// ring one step late, so the GPU always has the next step queued while JavaScript waits.
import type { GpuContext } from '../gpu/context';
import { GpuContext as Gpu } from '../gpu/context';
import { adamwHyperWords } from '../kernels/adamw';
import { tokenIndexLength } from '../kernels/embedding-index';
import { formatConfigErrors } from '../spec/model-config';
import { initParams } from '../model/init';
import { ModelPlan } from '../model/plan';
import { act, nsaStatsMaxDistance } from '../model/activations';
import { validateRunConfig, type RunConfig } from './config';
import type { Batch, Dataset } from './datasets';
import { learningRate, type LrSchedule } from './lr-schedule';
import type { EvalMetrics, Heartbeat, NsaStepStats, StepMetrics, TrainerPhase } from './types';
import { decodeNsaStats, nsaStatsLength } from '../kernels/nsa-stats';

export interface TrainerHooks {
  onHeartbeat?(b: Heartbeat): void;
}

/** A step produced a non-finite loss or gradient norm. The AdamW kernel skipped that update. */
export class NonFiniteError extends Error {}

/** The GPU produced a selection that breaks docs/nsa-spec.md's rules (counted by the stats kernel). */
export class InvalidSelectionError extends Error {}

const STAGING_SLOTS = 3;
const SCALAR_BYTES = 16; // loss, grad norm, clip scale, (pad); NSA stats per layer follow

interface Pending {
  step: number;
  lr: number;
  slot: number;
  mapped: Promise<void>;
}

export class Trainer {
  private stepCount = 0;
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
  private readonly nsaStatsWords: number;
  private readonly stagingBytes: number;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: RunConfig,
    readonly plan: ModelPlan,
    readonly dataset: Dataset,
    private readonly hooks: TrainerHooks,
  ) {
    const { N, gradAccum } = plan.shape;
    const m = config.model;
    this.nsaStatsWords = m.attention === 'nsa' ? nsaStatsLength(nsaStatsMaxDistance(m)) : 0;
    this.stagingBytes = SCALAR_BYTES + 4 * this.nsaStatsWords * m.nLayers;
    this.staging = Array.from({ length: STAGING_SLOTS }, (_, i) =>
      gpu.createBuffer({ label: `staging#${i}`, size: this.stagingBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    );
    this.evalStaging = gpu.createBuffer({ label: 'staging.eval', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.batches = Array.from({ length: gradAccum }, () => ({ tokens: new Int32Array(N), targets: new Int32Array(N) }));
    this.tokenIndices = Array.from({ length: gradAccum }, () => new Int32Array(tokenIndexLength(N)));
    const t = config.train;
    this.schedule = { lrMax: t.lrMax, lrMin: t.lrMin, warmupSteps: t.warmupSteps, totalSteps: t.steps, warmupStartFraction: t.warmupStartFraction };
  }

  /** Validates everything before any GPU work, then builds the plan and uploads seeded weights. */
  static async create(gpu: GpuContext, config: RunConfig, dataset: Dataset, hooks: TrainerHooks = {}): Promise<Trainer> {
    const errs = validateRunConfig(config);
    if (dataset.vocabSize > config.model.vocabSize)
      errs.push({ field: 'model.vocabSize', message: `must be ≥ the dataset's vocabulary (${dataset.vocabSize})` });
    if (errs.length) throw new Error(`invalid run config:\n${formatConfigErrors(errs)}`);
    const t = config.train;
    const plan = await ModelPlan.build(gpu, config.model, t.batchSize, t.gradAccum, { gradClip: t.gradClip, weightDecay: t.weightDecay }, dataset.scoredPerSequence);
    plan.uploadParams(initParams(plan.specs, t.seed));
    const trainer = new Trainer(gpu, config, plan, dataset, hooks);
    trainer.beat('init', `model ready: ${plan.specs.length} tensors, ${(plan.gpuBytes / 2 ** 20).toFixed(1)} MiB on ${gpu.adapter.architecture}`);
    trainer.phase = 'idle';
    return trainer;
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

  /** Runs one optimizer step (one submit). Returns the previous step's metrics, or null on the first. */
  async step(): Promise<StepMetrics | null> {
    const { gpu, plan } = this;
    const t = this.config.train;
    const step = this.stepCount;
    this.phase = 'data';
    for (let m = 0; m < plan.shape.gradAccum; m++) {
      const b = this.batches[m];
      this.dataset.nextTrainBatch(b);
      plan.writeBatch(m, b.tokens, b.targets, this.tokenIndices[m]);
    }
    this.phase = 'step';
    const lr = learningRate(this.schedule, step);
    plan.hyper.write(adamwHyperWords({ lr, beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, step: step + 1 }));
    const slot = step % STAGING_SLOTS;
    const enc = gpu.device.createCommandEncoder({ label: `step ${step}` });
    plan.encodeZeroGrads(enc);
    const pass = enc.beginComputePass({ label: `step ${step}` });
    for (const micro of plan.microSteps) Gpu.encode(pass, micro);
    Gpu.encode(pass, plan.optimizer);
    pass.end();
    const scalars = plan.acts;
    enc.copyBufferToBuffer(scalars.get('loss_acc').buffer, scalars.get('loss_acc').offset, this.staging[slot], 0, 4);
    enc.copyBufferToBuffer(scalars.get('grad_stats').buffer, scalars.get('grad_stats').offset, this.staging[slot], 4, 8);
    for (let l = 0; this.nsaStatsWords > 0 && l < this.config.model.nLayers; l++) {
      const st = scalars.get(act.layer(l, 'nsa_stats'));
      enc.copyBufferToBuffer(st.buffer, st.offset, this.staging[slot], SCALAR_BYTES + 4 * this.nsaStatsWords * l, 4 * this.nsaStatsWords);
    }
    gpu.submit([enc.finish()]);
    this.pending.push({ step, lr, slot, mapped: this.staging[slot].mapAsync(GPUMapMode.READ) });
    this.stepCount++;
    return this.pending.length > 1 ? this.resolve(this.pending.shift()!) : null;
  }

  private async resolve(p: Pending): Promise<StepMetrics> {
    await p.mapped;
    const buf = this.staging[p.slot];
    const raw = buf.getMappedRange(0, this.stagingBytes).slice(0);
    buf.unmap();
    const v = new Float32Array(raw, 0, 3);
    const now = performance.now();
    const stepMs = now - this.lastResolvedAt;
    this.lastResolvedAt = now;
    const m: StepMetrics = {
      step: p.step,
      loss: v[0],
      lr: p.lr,
      gradNorm: v[1],
      tokensPerSecond: this.tokensPerStep / (stepMs / 1000),
      stepMs,
      elapsedMs: now - this.startedAt,
    };
    if (this.nsaStatsWords > 0) m.nsa = this.decodeNsa(raw);
    this.lastMetrics = m;
    if (!Number.isFinite(m.loss) || !Number.isFinite(m.gradNorm)) {
      const msg = `step ${p.step}: loss ${m.loss}, grad norm ${m.gradNorm} — non-finite; the optimizer skipped this update, weights are intact`;
      this.beat('error', msg, m);
      throw new NonFiniteError(msg);
    }
    if (m.nsa && m.nsa.invalid > 0) {
      const msg = `step ${p.step}: ${m.nsa.invalid} invalid NSA selection rows (a kernel bug: selections must satisfy the spec's top-n rules)`;
      this.beat('error', msg, m);
      throw new InvalidSelectionError(msg);
    }
    this.beat('step', `step ${p.step}`, m);
    return m;
  }

  private decodeNsa(raw: ArrayBuffer): NsaStepStats {
    const L = this.config.model.nLayers;
    const maxD = nsaStatsMaxDistance(this.config.model);
    const perLayer = Array.from({ length: L }, (_, l) =>
      decodeNsaStats(new Uint32Array(raw, SCALAR_BYTES + 4 * this.nsaStatsWords * l, this.nsaStatsWords), maxD),
    );
    const gateMean = [0, 1, 2].map((c) => perLayer.reduce((a, s) => a + s.gateMean[c], 0) / L) as [number, number, number];
    const histogram = perLayer[0].histogram.map((_, k) => perLayer.reduce((a, s) => a + s.histogram[k], 0));
    return {
      gateMean,
      histogram,
      invalid: perLayer.reduce((a, s) => a + s.invalid, 0),
      perLayer: perLayer.map((s) => ({ gateMean: s.gateMean, invalid: s.invalid })),
    };
  }

  /** Waits for the GPU and returns the metrics of the last submitted step. */
  async flush(): Promise<StepMetrics | null> {
    let last: StepMetrics | null = null;
    while (this.pending.length) last = await this.resolve(this.pending.shift()!);
    return last ?? this.lastMetrics;
  }

  /** Mean loss over the dataset's fixed validation batches (micro-batch 0's input slots). */
  async evaluate(): Promise<EvalMetrics> {
    await this.flush();
    const { gpu, plan } = this;
    const batches = this.dataset.validationBatches(this.config.train.evalBatches);
    if (batches.length === 0) throw new Error(`dataset ${this.dataset.name} has no validation split`);
    this.beat('eval', `evaluating ${batches.length} batches`);
    const idx = this.tokenIndices[0];
    let total = 0;
    for (const b of batches) {
      plan.writeBatch(0, b.tokens, b.targets, idx);
      const enc = gpu.device.createCommandEncoder({ label: 'eval' });
      const pass = enc.beginComputePass();
      Gpu.encode(pass, plan.evalForward);
      pass.end();
      const vl = plan.acts.get('val_loss');
      enc.copyBufferToBuffer(vl.buffer, vl.offset, this.evalStaging, 0, 4);
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

  /** Current parameters (for checkpoints and tests). */
  readParams(): Promise<Map<string, Float32Array>> {
    return this.plan.readArena(this.plan.params);
  }

  destroy(): void {
    for (const b of this.staging) b.destroy();
    this.evalStaging.destroy();
    for (const a of [this.plan.params, this.plan.grads, this.plan.adamM, this.plan.adamV, this.plan.acts]) for (const b of a.buffers) b.destroy();
  }
}
