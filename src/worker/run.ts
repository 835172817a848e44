// One playground run inside the worker: the trainer and its session, the run's log (heartbeats,
// metrics), the kept selection snapshots, generation from the current weights, and the checkpoint
// file (the CLI's format) it is saved to or continued from. Imported lazily by the worker, so
// probing the adapter does not wait for the model code and tokenizers to load.
import type { TokenDecoder } from '../decode/generate';
import { GpuDecoder } from '../decode/gpu-decoder';
import { gpuTokenDecoder } from '../decode/gpu-token-decoder';
import { numSelBlocks } from '../definitions/nsa-blocks';
import { countParams } from '../definitions/params';
import type { SelectionSnapshot } from '../definitions/selection-snapshot';
import { snapshotSelectionOf } from '../definitions/selection-snapshot';
import type { GpuContext } from '../gpu/context';
import { readSelectionSnapshots } from '../model/nsa/snapshot-read';
import { decodeCheckpoint, type TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import type { RunConfig } from '../train/config';
import type { Dataset } from '../train/data/datasets';
import { evaluateRun } from '../train/eval/task-eval';
import { csvRows } from '../train/metrics-csv';
import { Trainer } from '../train/trainer';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import { buildDataset, describeDataset } from './data-source';
import { TokenStreamer } from './generation';
import {
  checkpointData,
  type DataSpec,
  defaultSnapshotEvery,
  type ExportFiles,
  type GenerateRequest,
  type GenerateResult,
  type GenerateStart,
  type InitInfo,
  type InitRequest,
  type RunHistory,
  type StreamedToken,
  type TrainOptions,
  type TrainResult,
  type TrainUpdate,
} from './protocol';
import { RunLog } from './run-log';
import { type CheckpointResult, type TestFault, TrainingSession } from './session';
import { snapshotCapacity, SnapshotHistory } from './snapshot-history';

/** Every (layer, group) snapshot of one training step. */
interface StepSnapshots {
  step: number;
  snaps: SelectionSnapshot[];
}

/** The name a checkpoint is reported under when the page gives none. */
const DEFAULT_CHECKPOINT_FILE = 'checkpoint.safetensors';

// checkpointData lives in ./protocol (the page checks a checkpoint's data before it replaces a run).
export { checkpointData };

export class PlaygroundRun {
  readonly log = new RunLog();
  private readonly session: TrainingSession;
  private snapshots: SnapshotHistory<StepSnapshots> | null = null;
  private readonly streamer: TokenStreamer;
  private decoder: Promise<GpuDecoder> | null = null;
  private testHooks: boolean;
  /** Every step's metrics and every evaluation so far (a checkpoint's included), for checkpoints. */
  private readonly metrics: StepMetrics[];
  private readonly evals: EvalMetrics[];
  /** A checkpoint being read back: train() waits for it, so no step changes the state it reads. */
  private saving: Promise<unknown> = Promise.resolve();
  /** train() calls not yet finished (counted from the call, before any await): checkpoint() refuses meanwhile. */
  private trainCalls = 0;
  /** The current train() call's early stop (TrainOptions.stopAtAccuracy), or null. */
  private stopAtAccuracy: number | null = null;

  private constructor(
    private readonly gpu: GpuContext,
    private readonly req: InitRequest,
    private readonly trainer: Trainer,
    private readonly dataset: Dataset,
    from: { metrics: StepMetrics[]; evals: EvalMetrics[] } | null,
  ) {
    this.testHooks = req.testHooks === true;
    this.session = new TrainingSession(
      trainer,
      { onReport: (cb) => gpu.onReport(cb), workDone: () => gpu.device.queue.onSubmittedWorkDone(), lost: gpu.lost },
      {
        checkpoints: { due: (n) => this.checkpointDue(n), take: (n) => this.atCheckpoint(n) },
        loseDevice: () => gpu.device.destroy(),
      },
    );
    this.streamer = new TokenStreamer(req.config.model, dataset, (params) => this.gpuDecoder(params));
    this.metrics = [...(from?.metrics ?? [])];
    this.evals = [...(from?.evals ?? [])];
    for (const [m, e] of csvRows(this.metrics, this.evals)) {
      if (m) this.log.metrics(m);
      if (e) this.log.evaluation(e);
    }
  }

  /**
   * A new run, or with `req.checkpoint` the run that file holds, continued exactly where it was
   * written (its config, data cursor, weights and AdamW moments; its metrics and evaluations start
   * the log). A file that is not a valid checkpoint throws CheckpointFormatError naming the file
   * and the field.
   */
  static async create(gpu: GpuContext, req: InitRequest, brownText: () => Promise<string>): Promise<PlaygroundRun> {
    let from: TrainingCheckpoint | null = null;
    if (req.checkpoint) {
      const file = req.checkpointFile ?? DEFAULT_CHECKPOINT_FILE;
      from = decodeCheckpoint(req.checkpoint, { file });
      const config = from.config;
      req = {
        ...req,
        config,
        data: checkpointData(config, req.data, file),
        snapshotEvery: defaultSnapshotEvery(config),
        checkpoint: undefined,
      };
    }
    const dataset = await buildDataset(req.config, req.data, brownText);
    // Heartbeats start during Trainer.create, before the run object exists.
    const early: Heartbeat[] = [];
    let run: PlaygroundRun | null = null;
    const hooks = { onHeartbeat: (b: Heartbeat) => (run ? run.onHeartbeat(b) : early.push(b)) };
    const trainer = from ? await Trainer.fromCheckpoint(gpu, from, dataset, hooks) : await Trainer.create(gpu, req.config, dataset, hooks);
    run = new PlaygroundRun(gpu, req, trainer, dataset, from);
    for (const b of early) run.onHeartbeat(b);
    return run;
  }

  get info(): Omit<InitInfo, 'adapter'> {
    return {
      dataset: describeDataset(this.dataset),
      paramCount: countParams(this.req.config.model),
      gpuBytes: this.trainer.gpuBytes,
      tokensPerStep: this.trainer.tokensPerStep,
      heartbeat: this.log.lastHeartbeat,
      snapshotCapacity: this.takesSnapshots ? this.snapshotCapacity() : 0,
      config: this.req.config,
      stepsDone: this.stepsDone,
      metrics: [...this.metrics],
      evals: [...this.evals],
    };
  }

  get stepsDone(): number {
    return this.trainer.stepsDone;
  }

  /** Every step's metrics and evaluation so far (copies). */
  get history(): RunHistory {
    return { metrics: [...this.metrics], evals: [...this.evals] };
  }

  private get takesSnapshots(): boolean {
    return snapshotSelectionOf(this.req.config.model) !== null && this.req.snapshotEvery > 0;
  }

  private onHeartbeat(b: Heartbeat): void {
    this.log.heartbeat(b);
    this.session.onHeartbeat(b);
  }

  /** Trains `steps` more steps (fewer when `opts.stopAtAccuracy` is reached); updates stream through `emit` (batched, ≤ 10/s). */
  async train(steps: number, emit: (u: TrainUpdate) => void, opts: TrainOptions = {}): Promise<TrainResult> {
    this.trainCalls++;
    this.stopAtAccuracy = opts.stopAtAccuracy ?? null;
    try {
      await this.saving;
      return await this.trainNow(steps, emit);
    } finally {
      this.trainCalls--;
    }
  }

  private async trainNow(steps: number, emit: (u: TrainUpdate) => void): Promise<TrainResult> {
    const logged = (u: TrainUpdate) => {
      for (const m of u.metrics) {
        this.log.metrics(m);
        this.metrics.push(m);
      }
      emit(u);
    };
    // A beat at the start of every call: the watchdog and the log see the run moving again.
    emit({ metrics: [], evals: [], heartbeat: this.log.mark('step', `training from step ${this.stepsDone}`), snapshotSteps: null });
    const r = await this.session.train(steps, logged);
    if (r.end === 'stopped') return { ...r, heartbeat: null };
    const done = this.stepsDone >= this.req.config.train.steps;
    const heartbeat = this.log.mark(
      done ? 'done' : 'paused',
      done ? `done after ${this.stepsDone} steps` : `paused after ${this.stepsDone} steps`,
    );
    return { ...r, heartbeat };
  }

  pause(): void {
    this.session.pause();
  }

  /** Whether a training call is running on the device now. */
  get training(): boolean {
    return this.session.state === 'training';
  }

  /** Ends the run after the step in flight and frees its GPU memory. */
  async stop(): Promise<void> {
    this.streamer.cancel();
    await this.session.stop();
    this.snapshots?.clear();
  }

  /** Test hook (only with testHooks): the next step first waits `ms`, sending nothing. */
  debugStall(ms: number): void {
    if (!this.testHooks) throw new Error('__debugStall is a test hook: open the page with ?testHooks=1 to use it.');
    this.session.stallNextStep(ms);
  }

  /** Test hook (only with testHooks): destroy the device now. */
  debugLoseDevice(): void {
    if (!this.testHooks) throw new Error('__debugLoseDevice is a test hook: open the page with ?testHooks=1 to use it.');
    this.gpu.device.destroy();
  }

  /** Test hook (only with testHooks): destroy the device or block this thread before a given step. */
  debugFault(fault: TestFault): void {
    if (!this.testHooks) throw new Error('__debugFault is a test hook: open the page with ?testHooks=1 to use it.');
    this.session.injectFault(fault);
  }

  // ---- Checkpoints: snapshots first (an evaluation overwrites the activations), then validation.

  private checkpointDue(stepsDone: number): boolean {
    return this.snapshotDue(stepsDone) || this.evalDue(stepsDone);
  }

  private snapshotDue(stepsDone: number): boolean {
    const k = this.req.snapshotEvery;
    return this.takesSnapshots && (stepsDone === 1 || stepsDone % k === 0 || stepsDone === this.req.config.train.steps);
  }

  private evalDue(stepsDone: number): boolean {
    const t = this.req.config.train;
    if (t.evalBatches === 0 || this.dataset.valTokens === 0) return false;
    return (t.evalEvery > 0 && stepsDone % t.evalEvery === 0) || stepsDone === t.steps;
  }

  private async atCheckpoint(stepsDone: number): Promise<CheckpointResult> {
    const out: CheckpointResult = {};
    // Selections are kept from the first full-length step (a sequence-length warm-up's steps train
    // shorter sequences than the viewer's model.seqLen).
    if (this.snapshotDue(stepsDone) && !this.trainer.inShortSeq) out.snapshotSteps = await this.takeSnapshot(stepsDone - 1);
    if (this.evalDue(stepsDone)) {
      const e: EvalMetrics = await evaluateRun(this.trainer, this.req.config);
      this.log.evaluation(e);
      this.evals.push(e);
      out.eval = e;
      // Early stop: the loop asks whether to stop before its next step, so the run ends at this evaluation.
      if (this.stopAtAccuracy !== null && e.accuracy !== undefined && e.accuracy >= this.stopAtAccuracy) this.session.pause();
    }
    return out;
  }

  /** How many steps' snapshots fit the budget: per (layer, group) tokens, sel, scores and gates, 4 bytes each. */
  private snapshotCapacity(): number {
    const c = this.req.config.model;
    const T = c.seqLen;
    const sel = snapshotSelectionOf(c)!;
    const gates = sel.mechanism === 'nsa' ? (c.nHeads / c.nKvGroups) * 3 : 0;
    const perGroup = 4 * T * (1 + sel.cfg.nSel + numSelBlocks(T, sel.cfg) + gates);
    return snapshotCapacity(perGroup * c.nLayers * c.nKvGroups);
  }

  private async takeSnapshot(step: number): Promise<number[]> {
    const plan = this.trainer.plan;
    // The activations hold the step's last micro-batch; its row 0 is the sequence shown.
    const tokens = await plan.readBatchTokens(plan.shape.gradAccum - 1);
    const snaps = await readSelectionSnapshots(this.gpu, plan, { step, tokens });
    this.snapshots ??= new SnapshotHistory<StepSnapshots>(this.snapshotCapacity());
    this.snapshots.add({ step, snaps });
    return this.snapshots.steps;
  }

  get snapshotSteps(): number[] {
    return this.snapshots?.steps ?? [];
  }

  /** The kept snapshot of (step, layer, group), or null when that step is not kept. */
  snapshot(step: number, layer: number, group: number): SelectionSnapshot | null {
    const c = this.req.config.model;
    if (!(Number.isInteger(layer) && layer >= 0 && layer < c.nLayers)) throw new RangeError(`layer ${layer} outside [0, ${c.nLayers})`);
    if (!(Number.isInteger(group) && group >= 0 && group < c.nKvGroups)) throw new RangeError(`group ${group} outside [0, ${c.nKvGroups})`);
    const s = this.snapshots?.at(step);
    return s?.snaps.find((x) => x.layer === layer && x.group === group) ?? null;
  }

  // ---- Generation from the current weights (the GPU decoder on this run's device).

  /** The run's GPU decoder (built on first use, kept: its pipelines and caches) over these weights. */
  private async gpuDecoder(params: ReadonlyMap<string, ArrayLike<number>>): Promise<TokenDecoder> {
    this.decoder ??= GpuDecoder.create(this.gpu, this.req.config.model);
    const dec = await this.decoder;
    dec.loadParams(params);
    return gpuTokenDecoder(dec);
  }

  async generate(
    req: GenerateRequest,
    onStart: (s: GenerateStart) => void,
    onTokens: (t: StreamedToken[]) => void,
  ): Promise<GenerateResult> {
    const step = this.stepsDone;
    const params = await this.trainer.readParams();
    return this.streamer.run(params, step, req, onStart, onTokens);
  }

  cancelGenerate(): void {
    this.streamer.cancel();
  }

  /**
   * The run as a checkpoint file (the CLI's checkpoint.safetensors format, reason 'page'):
   * parameters, AdamW moments, step, data cursor, config, metrics and evaluations. Only between
   * train() calls (paused or done): it throws while training or after the run was stopped.
   */
  async checkpoint(now: Date = new Date()): Promise<Uint8Array> {
    const state = this.session.state;
    if (state === 'training' || this.trainCalls > 0)
      throw new Error('Pause the run before saving a checkpoint: a training call is still running.');
    if (state === 'closed') throw new Error('This run was stopped; there is nothing to save.');
    const bytes = this.trainer.checkpoint({ metrics: this.metrics, evals: this.evals, reason: 'page', savedAt: now });
    this.saving = bytes.catch(() => {});
    return bytes;
  }

  /** The CLI's run files: heartbeat.jsonl, metrics.csv, and config.json as npm run train writes it (the run config plus stepsDone). */
  exportFiles(): ExportFiles {
    const configJson = JSON.stringify({ ...this.req.config, stepsDone: this.stepsDone }, null, 2) + '\n';
    return { heartbeatsJsonl: this.log.heartbeatsJsonl(), metricsCsv: this.log.metricsCsv(), configJson };
  }
}
