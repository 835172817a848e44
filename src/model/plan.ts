// The model plan: arenas sized from the config at init, typed tables over them (parameters,
// gradients, Adam moments, activations), and every dispatch of a training step prebuilt (forward
// and backward per micro-batch, then grad-norm and AdamW). Callers use its narrow API — write a
// batch, encode a training step / an eval forward / a logits forward, copy the step's scalars out,
// read probabilities or the selection, export and import named parameters and optimizer state —
// and never see an arena name. A step only encodes prebuilt lists; it creates nothing.
import type { DsaPhase } from '../definitions/dsa-config';
import { dsaPhaseAt, isIndexerParam } from '../definitions/dsa-params';
import { assertValidModelConfig, type ModelConfig, shortConvTaps, usesRope } from '../definitions/model-config';
import { numSelBlocks } from '../definitions/nsa-blocks';
import { adamwHyper, type OptimizerSettings } from '../definitions/optimizer';
import { numel, type ParamSpec, paramSpecs } from '../definitions/params';
import { type Arena, type BufferSlice, createLayoutArena } from '../gpu/arena';
import { type Dispatch, GpuContext } from '../gpu/context';
import type { UniformSlot } from '../gpu/uniforms';
import { adamwDispatch, adamwHyperWords } from '../kernels/adamw';
import { attentionBackwardDispatches, attentionForwardDispatch } from '../kernels/attention';
import { crossEntropyDispatch } from '../kernels/crossentropy';
import { embeddingBackwardDispatch, embeddingForwardDispatch } from '../kernels/embedding';
import { buildTokenIndex } from '../kernels/embedding-index';
import { gradNormDispatches, gradNormPartialsLength, type GradRange } from '../kernels/gradnorm';
import { type MatmulArgs, matmulDispatches, matmulPartsFloats } from '../kernels/matmul';
import type { NsaAttnVariant } from '../kernels/nsa-attention';
import { gateForwardDispatch } from '../kernels/nsa-gates';
import { decodeNsaStats, type NsaStats, nsaStatsDispatches, nsaStatsLength } from '../kernels/nsa-stats';
import { sumDispatch } from '../kernels/reduce';
import { addDispatch } from '../kernels/residual';
import { rmsnormBackwardDispatches, rmsnormForwardDispatch } from '../kernels/rmsnorm';
import { ropeDispatch } from '../kernels/rope';
import { shortConvBackwardInputDispatch, shortConvBackwardWeightDispatch, shortConvForwardDispatch } from '../kernels/short-conv';
import { swigluBackwardDispatch, swigluForwardDispatch } from '../kernels/swiglu';
import { activationLayout, type Activations, dkvLabel, kvLabel, nsaShape, nsaStatsMaxDistance, type PlanShape } from './activations';
import { dsaBackwardDispatches, dsaForwardDispatches, type DsaIO } from './dsa/core';
import { indexerParamGradDispatches, indexerProjectDispatches, type IndexerRowsArgs } from './dsa/indexer';
import { isMechanism, mechanismBackward, mechanismForward, type MechanismIO } from './mechanisms';
import { nsaCoreBackward, nsaCoreForward, type NsaCoreIO } from './nsa/core';
import { paramLayout, paramRuns, type ParamTensors } from './param-tensors';

export type { PlanShape } from './activations';

/**
 * The factor turning per-row losses into the step's mean loss (and the cross-entropy's gradScale):
 * one over the scored targets of a micro-batch, times the micro-batches of a training step.
 */
export function lossScale(s: PlanShape, mode: 'train' | 'eval'): number {
  return 1 / (s.B * s.scoredPerSequence * (mode === 'train' ? s.gradAccum : 1));
}

export interface PlanOptions {
  batchSize: number;
  gradAccum: number;
  optimizer: OptimizerSettings;
  /**
   * How many targets of each sequence the loss counts (a dataset that scores only some positions
   * writes IGNORE_TARGET at the others); the loss is the mean over those. Default: all (seqLen).
   */
  scoredPerSequence?: number;
  /**
   * NSA branch attention kernels: 'group' (what GPUs run) or 'simple' (what software adapters
   * run); default by adapter. Tests set it to run both on one adapter.
   */
  nsaKernels?: NsaAttnVariant;
}

/** The scalars of one training step, decoded from the bytes encodeStepReadback copied. */
export interface StepScalars {
  /** Mean loss over the step's scored targets. */
  loss: number;
  gradNorm: number;
  /** Factor the clip applied to the gradients (1 = not clipped). */
  clipScale: number;
  /** NSA: each layer's statistics of the step's last micro-batch. */
  nsa?: NsaStats[];
  /** DSA: the indexer loss Σ over layers of L_I (docs/dsa-spec.md section 5), beside the cross-entropy `loss`. */
  indexLoss?: number;
}

/** A selection tensor of one layer and the entries to read from its start. */
interface SelectionRead {
  slice: BufferSlice;
  count: number;
}

/** Row 0's selection tensors of one NSA layer, as the last forward left them. */
export interface LayerSelection {
  /** [T, G, nSel] selected block indices (−1 = none). */
  sel: Int32Array;
  /** [T, G, nBlocks] selection scores. */
  scores: Float32Array;
  /** [T, H, 3] gates (empty for MoBA, which has none). */
  gates: Float32Array;
}

/**
 * One encoded training step: per micro-batch forward then backward, the optimizer, and the eval
 * forward. A DSA model has two (docs/dsa-spec.md section 5): the sparse phase ('main', also every
 * other model's only one) and the warm-up, whose backward is the indexers' alone and whose AdamW
 * touches only the indexers' parameters.
 */
interface EncodedStep {
  micro: readonly Dispatch[][];
  optimizer: readonly Dispatch[];
  evalForward: readonly Dispatch[];
}

/** Named tensors: parameters, gradients or one Adam moment, keyed by src/definitions/params.ts names. */
export type NamedTensors = Map<string, Float32Array>;

/** What a step's scalar readback holds, in bytes: loss, grad norm, clip scale, DSA's indexer loss (else pad); then NSA stats per layer. */
const SCALAR_BYTES = 16;

export class ModelPlan {
  /** Bytes of one training step's readback (encodeStepReadback). */
  readonly readbackBytes: number;
  private readonly nsaStatsWords: number;
  private readonly logitsForward = new Map<DsaPhase, Promise<Dispatch[]>>();
  /** DSA: the phase of the last training step encoded (eval and logits run the model as it trains). */
  private phase: DsaPhase;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    readonly shape: PlanShape,
    readonly specs: readonly ParamSpec[],
    private readonly arenas: { params: Arena; grads: Arena; adamM: Arena; adamV: Arena; acts: Arena },
    /** The four parameter-shaped tables (one layout over four arenas). */
    private readonly tables: { params: ParamTensors; grads: ParamTensors; adamM: ParamTensors; adamV: ParamTensors },
    private readonly acts: Activations,
    private readonly builder: StepBuilder,
    /** The encoded step; DSA with warmupSteps > 0: and the warm-up's. */
    private readonly steps: { main: EncodedStep; warmup?: EncodedStep },
    /** Per-step AdamW hyperparameters (learning rate, step), rewritten before each submit. */
    private readonly hyper: UniformSlot,
    readonly optimizerSettings: Readonly<OptimizerSettings>,
  ) {
    this.nsaStatsWords = config.attention === 'nsa' ? nsaStatsLength(nsaStatsMaxDistance(config)) : 0;
    this.readbackBytes = SCALAR_BYTES + 4 * this.nsaStatsWords * config.nLayers;
    this.phase = this.phaseAt(1);
  }

  /** DSA: the phase of optimizer step `step` (≥ 1); every other model is always 'sparse' (its one step). */
  private phaseAt(step: number): DsaPhase {
    const dsa = this.config.attention === 'dsa' ? this.config.dsa : undefined;
    return dsa ? dsaPhaseAt(step - 1, dsa) : 'sparse';
  }

  private encoded(phase: DsaPhase): EncodedStep {
    return (phase === 'warmup' ? this.steps.warmup : undefined) ?? this.steps.main;
  }

  static async build(gpu: GpuContext, config: ModelConfig, o: PlanOptions): Promise<ModelPlan> {
    assertValidModelConfig(config);
    const T = config.seqLen;
    const scoredPerSequence = o.scoredPerSequence ?? T;
    if (!(Number.isInteger(scoredPerSequence) && scoredPerSequence >= 1 && scoredPerSequence <= T))
      throw new RangeError(`ModelPlan: scoredPerSequence must be an integer in [1, seqLen = ${T}] (got ${scoredPerSequence})`);
    const shape: PlanShape = { B: o.batchSize, T, N: o.batchSize * T, gradAccum: o.gradAccum, scoredPerSequence };
    const specs = paramSpecs(config);
    const layout = paramLayout(config);
    const { arena: params, tensors: p } = createLayoutArena(gpu, 'params', layout);
    const { arena: grads, tensors: g } = createLayoutArena(gpu, 'grads', layout);
    const { arena: adamM, tensors: am } = createLayoutArena(gpu, 'adam_m', layout);
    const { arena: adamV, tensors: av } = createLayoutArena(gpu, 'adam_v', layout);
    // The gradient norm over each buffer's run of gradients as one range (paramRuns: padding adds 0).
    const ranges: GradRange[] = paramRuns(g, false).map((r) => ({ slice: r.slice, n: r.floats }));
    // The activations, then the gradient norm's partial sums (sized by the gradient ranges).
    const {
      arena: acts,
      tensors: { a, gradNormPartials, matmulParts },
    } = createLayoutArena(gpu, 'activations', (place) => ({
      a: activationLayout(config, shape)(place),
      gradNormPartials: place('gradnorm_partials', gradNormPartialsLength(ranges)),
      // The partial sums of every matmul split over K (none on software adapters).
      matmulParts: place('matmul_parts', matmulPartsFloats(gpu.adapter)),
    }));
    const builder = new StepBuilder(gpu, config, shape, p, g, a, matmulParts, o.nsaKernels);
    const opt = { ...o.optimizer };
    const hyper = gpu.uniform(adamwHyperWords(adamwHyper(opt, 0, 1)));
    const gradNorm = gradNormDispatches(gpu, { ranges, partials: gradNormPartials, stats: a.gradStats, maxNorm: opt.gradClip });
    // AdamW over each run of tensors with one weight-decay flag (paramRuns): the four tables share
    // one layout, so run i of each is the same parameters. `select`: only those tensors (the
    // others, their moments included, stay exactly as they are: no decay either).
    const optimizerList = (select?: (s: ParamSpec) => boolean): PendingDispatches => {
      const runs = [p, g, am, av].map((table) => paramRuns(table, true, select));
      return [
        gradNorm,
        ...runs[0].map((r, i) =>
          adamwDispatch(gpu, {
            param: r.slice,
            grad: runs[1][i].slice,
            m: runs[2][i].slice,
            v: runs[3][i].slice,
            n: r.floats,
            decay: r.decay,
            hyper,
            stats: a.gradStats,
          }),
        ),
      ];
    };
    const encodeStep = async (phase: DsaPhase, select?: (s: ParamSpec) => boolean): Promise<EncodedStep> => {
      const micro = Array.from({ length: o.gradAccum }, (_, m) => settle([builder.forward(m, 'train', phase), builder.backward(m, phase)]));
      const [microSteps, evalForward, optimizer] = await Promise.all([
        Promise.all(micro),
        builder.forward(0, 'eval', phase),
        settle(optimizerList(select)),
      ]);
      return { micro: microSteps, optimizer, evalForward };
    };
    const dsa = config.attention === 'dsa' ? config.dsa : undefined;
    const [main, warmup] = await Promise.all([
      encodeStep('sparse'),
      dsa && dsa.warmupSteps > 0 ? encodeStep('warmup', (s) => isIndexerParam(s.name)) : undefined,
    ]);
    return new ModelPlan(
      gpu,
      config,
      shape,
      specs,
      { params, grads, adamM, adamV, acts },
      { params: p, grads: g, adamM: am, adamV: av },
      a,
      builder,
      warmup ? { main, warmup } : { main },
      hyper,
      opt,
    );
  }

  /** Total bytes of all arenas (constant after init). */
  get gpuBytes(): number {
    const r = this.arenas;
    return [r.params, r.grads, r.adamM, r.adamV, r.acts].reduce((a, x) => a + x.totalBytes, 0);
  }

  // ---- Inputs

  /**
   * Uploads micro-batch m's tokens, targets and the embedding backward's token index (built into
   * `indexScratch`, tokenIndexLength(N) ints, so the step allocates nothing).
   */
  writeBatch(m: number, tokens: Int32Array, targets: Int32Array, indexScratch: Int32Array): void {
    const slots = this.acts.batches[m];
    if (!slots) throw new RangeError(`writeBatch: micro-batch ${m} outside [0, ${this.shape.gradAccum})`);
    buildTokenIndex(tokens, indexScratch);
    this.gpu.write(slots.tokens, tokens);
    this.gpu.write(slots.targets, targets);
    this.gpu.write(slots.tokenIndex, indexScratch);
  }

  /** Row 0's first `count` tokens of micro-batch m as the GPU holds them. */
  readBatchTokens(m: number, count = this.shape.T): Promise<Int32Array> {
    return this.gpu.readI32(this.acts.batches[m].tokens, count);
  }

  // ---- Encoding (no pass may be open on `enc`)

  /**
   * One optimizer step at learning rate `lr`, optimizer step number `step` (≥ 1): zero the
   * gradients, forward + backward of every micro-batch, grad-norm, clip and AdamW.
   */
  encodeTrainStep(enc: GPUCommandEncoder, lr: number, step: number): void {
    this.hyper.write(adamwHyperWords(adamwHyper(this.optimizerSettings, lr, step)));
    this.phase = this.phaseAt(step);
    const encoded = this.encoded(this.phase);
    this.encodeZeroGrads(enc);
    const pass = enc.beginComputePass({ label: `step ${step}` });
    for (const micro of encoded.micro) GpuContext.encode(pass, micro);
    GpuContext.encode(pass, encoded.optimizer);
    pass.end();
  }

  /**
   * Forward + backward of every micro-batch with the gradients zeroed first (no optimizer): tests,
   * probes. DSA: in `phase` (default: the last training step's, or step 1's before any).
   */
  encodeForwardBackward(enc: GPUCommandEncoder, phase: DsaPhase = this.phase): void {
    this.encodeZeroGrads(enc);
    const pass = enc.beginComputePass({ label: 'forward+backward' });
    for (const micro of this.encoded(phase).micro) GpuContext.encode(pass, micro);
    pass.end();
  }

  /**
   * Forward of micro-batch 0's inputs; its mean loss over the scored targets goes to the eval scalar.
   * DSA: the model after `stepsDone` optimizer steps (the phase of step max(1, stepsDone): dense
   * attention until the warm-up is over); without it, the last training step's phase.
   */
  encodeEval(enc: GPUCommandEncoder, stepsDone?: number): void {
    const phase = stepsDone === undefined ? this.phase : this.phaseAt(Math.max(1, stepsDone));
    const pass = enc.beginComputePass({ label: 'eval' });
    GpuContext.encode(pass, this.encoded(phase).evalForward);
    pass.end();
  }

  /** Copies the step's scalars (and NSA statistics) into `dst` at `offset` (readbackBytes bytes). */
  encodeStepReadback(enc: GPUCommandEncoder, dst: GPUBuffer, offset = 0): void {
    const copy = (src: BufferSlice, at: number, bytes: number) => enc.copyBufferToBuffer(src.buffer, src.offset, dst, offset + at, bytes);
    copy(this.acts.lossAcc, 0, 4);
    copy(this.acts.gradStats, 4, 8);
    if (this.acts.indexLossAcc) copy(this.acts.indexLossAcc, 12, 4);
    if (this.nsaStatsWords > 0)
      this.acts.layers.forEach((l, i) => copy(l.nsa!.stats, SCALAR_BYTES + 4 * this.nsaStatsWords * i, 4 * this.nsaStatsWords));
  }

  /** Decodes readbackBytes bytes written by encodeStepReadback. */
  decodeStepReadback(raw: ArrayBuffer): StepScalars {
    const v = new Float32Array(raw, 0, 4);
    const out: StepScalars = { loss: v[0], gradNorm: v[1], clipScale: v[2] };
    if (this.acts.indexLossAcc) out.indexLoss = v[3];
    if (this.nsaStatsWords > 0) {
      const maxD = nsaStatsMaxDistance(this.config);
      out.nsa = this.acts.layers.map((_, l) =>
        decodeNsaStats(
          new Uint32Array(raw, SCALAR_BYTES + 4 * this.nsaStatsWords * l, this.nsaStatsWords),
          maxD,
          this.shape.B * this.shape.T * this.config.nKvGroups,
        ),
      );
    }
    return out;
  }

  /** Copies the eval forward's mean loss (4 bytes) into `dst` at `offset`. */
  encodeEvalReadback(enc: GPUCommandEncoder, dst: GPUBuffer, offset = 0): void {
    enc.copyBufferToBuffer(this.acts.valLoss.buffer, this.acts.valLoss.offset, dst, offset, 4);
  }

  /** The dispatches of one micro-batch's forward + backward and the optimizer (profiling). */
  stepDispatches(phase: DsaPhase = 'sparse'): Dispatch[] {
    const encoded = this.encoded(phase);
    return [...encoded.micro[0], ...encoded.optimizer];
  }

  // ---- Reads (tests, probes, the page; never on a training step's hot path)

  /** Submits one training step's work without the optimizer and returns the mean loss (tests). */
  async forwardBackward(phase: DsaPhase = this.phase): Promise<number> {
    const enc = this.gpu.device.createCommandEncoder({ label: 'forward+backward' });
    this.encodeForwardBackward(enc, phase);
    this.gpu.submit([enc.finish()]);
    return (await this.gpu.readF32(this.acts.lossAcc, 1))[0];
  }

  /** Per-row losses [N] of the last forward (micro-batch m's rows for a step: the last micro-batch). */
  readLosses(): Promise<Float32Array> {
    return this.gpu.readF32(this.acts.losses, this.shape.N);
  }

  /**
   * Next-token probabilities [N, V] of micro-batch 0's inputs: a forward to the logits (no loss,
   * nothing overwritten in place), then a float64 softmax per row on the CPU.
   */
  async readProbabilities(): Promise<Float32Array> {
    const phase = this.encoded(this.phase) === this.steps.main ? 'sparse' : 'warmup';
    let pending = this.logitsForward.get(phase);
    if (!pending) this.logitsForward.set(phase, (pending = this.builder.forward(0, 'logits', phase)));
    const list = await pending;
    const enc = this.gpu.device.createCommandEncoder({ label: 'logits' });
    const pass = enc.beginComputePass({ label: 'logits' });
    GpuContext.encode(pass, list);
    pass.end();
    this.gpu.submit([enc.finish()]);
    const V = this.config.vocabSize;
    const logits = await this.gpu.readF32(this.acts.logits, this.shape.N * V);
    for (let n = 0; n < this.shape.N; n++) {
      const row = logits.subarray(n * V, (n + 1) * V);
      let max = -Infinity;
      for (let v = 0; v < V; v++) max = Math.max(max, row[v]);
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(row[v] - max);
      for (let v = 0; v < V; v++) row[v] = Math.exp(row[v] - max) / sum;
    }
    return logits;
  }

  /**
   * Row 0's first `rows` positions of layer l's selection, scores and gates (NSA models; MoBA: no
   * gates; DSA: sel [rows, G, topK] of tokens, scores the index scores [rows, T], no gates).
   */
  async readSelection(l: number, rows = this.shape.T): Promise<LayerSelection> {
    const b = this.selectionBuffers(l, rows, 'readSelection');
    const [sel, scores, gates] = await Promise.all([
      this.gpu.readI32(b.sel.slice, b.sel.count),
      this.gpu.readF32(b.scores.slice, b.scores.count),
      b.gates ? this.gpu.readF32(b.gates.slice, b.gates.count) : new Float32Array(0),
    ]);
    return { sel, scores, gates };
  }

  /**
   * The first `rows` rows of layer l's selection alone, [rows, G, K] (blocks; DSA: tokens), −1 padded:
   * what the answer scorer needs (src/train/eval/needle-read.ts), without the scores and gates, which
   * at a whole batch are most of the bytes (DSA's index scores: rows · T floats).
   */
  async readSelectedUnits(l: number, rows = this.shape.T): Promise<Int32Array> {
    const { sel } = this.selectionBuffers(l, rows, 'readSelectedUnits');
    return this.gpu.readI32(sel.slice, sel.count);
  }

  /** Layer l's selection tensors and the entries of their first `rows` rows; throws naming `caller` for a layer without one or rows out of range. */
  private selectionBuffers(l: number, rows: number, caller: string): Record<'sel' | 'scores', SelectionRead> & { gates?: SelectionRead } {
    const c = this.config;
    const inRange = () => {
      if (!(Number.isInteger(rows) && rows >= 1 && rows <= this.shape.N))
        throw new RangeError(`${caller}: rows ${rows} outside [1, ${this.shape.N}]`);
    };
    const G = c.nKvGroups;
    const dsa = this.acts.layers[l]?.dsa;
    if (c.attention === 'dsa' && c.dsa && dsa) {
      inRange();
      return {
        sel: { slice: dsa.saved.sel, count: rows * G * c.dsa.topK },
        scores: { slice: dsa.saved.scores, count: rows * this.shape.T },
      };
    }
    const moba = this.acts.layers[l]?.moba;
    if (c.attention === 'moba' && c.moba && moba) {
      inRange();
      return {
        sel: { slice: moba.sel, count: rows * G * c.moba.topK },
        scores: { slice: moba.scores, count: rows * G * Math.ceil(this.shape.T / c.moba.blockSize) },
      };
    }
    const nsa = c.nsa;
    const la = this.acts.layers[l]?.nsa;
    if (c.attention !== 'nsa' || !nsa || !la)
      throw new RangeError(`${caller}: layer ${l} is not an NSA layer of this ${c.attention} model with ${c.nLayers} layers`);
    inRange();
    return {
      sel: { slice: la.core.sel, count: rows * G * nsa.nSel },
      scores: { slice: la.core.scores, count: rows * G * numSelBlocks(this.shape.T, nsa) },
      gates: { slice: la.gates, count: rows * c.nHeads * 3 },
    };
  }

  // ---- Named parameters and optimizer state (checkpoints, export, tests)

  private async readNamed(table: ParamTensors): Promise<NamedTensors> {
    const out: NamedTensors = new Map();
    for (const { spec, slice } of table.all) out.set(spec.name, await this.gpu.readF32(slice, numel(spec.shape)));
    return out;
  }

  private writeNamed(table: ParamTensors, what: string, values: ReadonlyMap<string, Float32Array>): void {
    for (const { spec: s } of table.all) {
      const v = values.get(s.name);
      if (!v) throw new RangeError(`${what}: no value for parameter ${s.name}`);
      if (v.length !== numel(s.shape)) throw new RangeError(`${what}: parameter ${s.name} has ${v.length} values for shape [${s.shape}]`);
    }
    for (const { spec, slice } of table.all) this.gpu.write(slice, values.get(spec.name)!);
  }

  exportParams(): Promise<NamedTensors> {
    return this.readNamed(this.tables.params);
  }

  /** Every parameter by name; all are checked before any is written. */
  importParams(values: ReadonlyMap<string, Float32Array>): void {
    this.writeNamed(this.tables.params, 'importParams', values);
  }

  /** The gradients of the last forward + backward (accumulated over its micro-batches). */
  exportGrads(): Promise<NamedTensors> {
    return this.readNamed(this.tables.grads);
  }

  /** AdamW's first and second moments by parameter name. */
  async exportOptimizerState(): Promise<{ m: NamedTensors; v: NamedTensors }> {
    return { m: await this.readNamed(this.tables.adamM), v: await this.readNamed(this.tables.adamV) };
  }

  importOptimizerState(state: { m: ReadonlyMap<string, Float32Array>; v: ReadonlyMap<string, Float32Array> }): void {
    this.writeNamed(this.tables.adamM, 'importOptimizerState (m)', state.m);
    this.writeNamed(this.tables.adamV, 'importOptimizerState (v)', state.v);
  }

  destroy(): void {
    const r = this.arenas;
    for (const a of [r.params, r.grads, r.adamM, r.adamV, r.acts]) for (const b of a.buffers) b.destroy();
  }

  private encodeZeroGrads(enc: GPUCommandEncoder): void {
    for (const b of this.arenas.grads.buffers) enc.clearBuffer(b);
  }
}

/**
 * Dispatch builders in flight. Lists are built without awaiting each builder so that the driver
 * compiles the pipelines concurrently (on SwiftShader compiling dominates start-up).
 */
type PendingDispatches = Array<Promise<Dispatch | Dispatch[]>>;

async function settle(list: PendingDispatches): Promise<Dispatch[]> {
  return (await Promise.all(list)).flat();
}

/** Builds the layer-by-layer dispatch lists (llm.c style: every step written out). */
class StepBuilder {
  private readonly N: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly c: ModelConfig,
    private readonly s: PlanShape,
    /** Parameters and their gradients: the same table over two arenas. */
    private readonly p: ParamTensors,
    private readonly g: ParamTensors,
    private readonly a: Activations,
    /** Scratch of the matmuls split over K (one at a time: the dispatches run in order). */
    private readonly matmulParts: BufferSlice,
    private readonly nsaKernels: NsaAttnVariant | undefined,
  ) {
    this.N = s.N;
  }

  /** A matmul, split over K where its output alone would leave the GPU idle (matmulSplitPlan). */
  private mm(args: Omit<MatmulArgs, 'label'> & { label: string }): Promise<Dispatch[]> {
    return matmulDispatches(this.gpu, args, { parts: this.matmulParts });
  }

  /** RoPE in place (none when the model has no positional encoding). */
  private rope(x: BufferSlice, heads: number, inverse: boolean): PendingDispatches {
    const { c, N } = this;
    if (!usesRope(c)) return [];
    return [ropeDispatch(this.gpu, { x, out: x, rows: N, T: this.s.T, heads, headDim: c.dk, theta: c.ropeTheta, inverse })];
  }

  /** The key convolution's shape (docs/nsa-spec.md 3.1). */
  private get convShape() {
    const { c, N } = this;
    return { rows: N, T: this.s.T, C: c.nKvGroups * c.dk, K: shortConvTaps(c) };
  }

  /**
   * q, k, v projections, the key convolution (if any) and RoPE on q and k (if any) (dense: one K/V
   * pair; NSA: one per branch or shared).
   */
  private projections(l: number): PendingDispatches {
    const { c, N, gpu } = this;
    const C = c.dim;
    const w = this.p.layers[l];
    const L = this.a.layers[l];
    const normed = L.attnNormed;
    const out: PendingDispatches = [
      this.mm({ a: normed, b: w.wq, c: L.q, M: N, K: C, N: c.nHeads * c.dk, label: `l${l}.q` }),
      ...this.rope(L.q, c.nHeads, false),
    ];
    L.kv.forEach((kv, i) => {
      const raw = L.kRaw?.[i];
      out.push(
        this.mm({ a: normed, b: w.kv[i].wk, c: raw ?? kv.k, M: N, K: C, N: c.nKvGroups * c.dk, label: `l${l}.${kvLabel(c, i, 0)}` }),
        this.mm({ a: normed, b: w.kv[i].wv, c: kv.v, M: N, K: C, N: c.nKvGroups * c.dv, label: `l${l}.${kvLabel(c, i, 1)}` }),
      );
      if (raw) out.push(shortConvForwardDispatch(gpu, { ...this.convShape, w: w.kv[i].kConv!, x: raw, out: kv.k }));
      out.push(...this.rope(kv.k, c.nKvGroups, false));
    });
    return out;
  }

  private nsaIO(l: number): NsaCoreIO {
    const L = this.a.layers[l];
    const kv = L.kv;
    // Shared K/V: the same pair for all three branches.
    const pick = (i: number) => kv[Math.min(i, kv.length - 1)];
    const mlp = this.p.layers[l].cmpMlp;
    return {
      q: L.q,
      cmp: pick(0),
      sel: pick(1),
      win: pick(2),
      gates: L.nsa!.gates,
      out: L.attn,
      saved: L.nsa!.core,
      mlp,
      kernels: this.nsaKernels,
      keysRead: L.nsa!.keysRead,
    };
  }

  /** A DSA layer's tensors (src/model/dsa/core.ts). */
  private dsaIO(l: number): DsaIO {
    const L = this.a.layers[l];
    const d = L.dsa!;
    return {
      q: L.q,
      k: L.kv[0].k,
      v: L.kv[0].v,
      out: L.attn,
      lse: L.lse!,
      qI: d.qI,
      kI: d.kI,
      wI: d.wI,
      saved: d.saved,
      kernels: this.nsaKernels,
    };
  }

  /** The indexer's rows: the layer's normed input, RoPE on d_I when the model uses it. */
  private indexerRows(l: number): IndexerRowsArgs {
    const { c, N } = this;
    return { N, T: this.s.T, C: c.dim, cfg: c.dsa!, ropeTheta: usesRope(c) ? c.ropeTheta : undefined, x: this.a.layers[l].attnNormed };
  }

  /**
   * DSA, layer l's indexer loss and its backward into the indexer's weight gradients (both phases),
   * with the main attention's backward in the sparse phase (into dq, dk, dv); L_I of the batch
   * added to the step's indexer loss. The first layer the backward visits (l = nLayers − 1) of
   * micro-batch 0 overwrites the sum.
   */
  private dsaBackward(l: number, m: number, phase: DsaPhase): PendingDispatches {
    const { c, N, gpu } = this;
    const dsa = c.dsa!;
    const d = this.a.grads;
    const gd = d.dsa!;
    // The gradient of the step's mean L_I over its micro-batches: λ / (B·T·gradAccum).
    const gradScale = dsa.lossWeight / (N * this.s.gradAccum);
    const main =
      phase === 'sparse' ? { dout: d.dattn, delta: d.delta, dq: d.dq, dk: d.dkv[0].k, dv: d.dkv[0].v, headParts: d.headParts } : undefined;
    return [
      dsaBackwardDispatches(gpu, dsa, nsaShape(c, this.s), phase, this.dsaIO(l), gd.scratch, {
        gradScale,
        dqI: gd.dqI,
        dkI: gd.dkI,
        dwI: gd.dwI,
        main,
      }),
      indexerParamGradDispatches(gpu, {
        ...this.indexerRows(l),
        dqI: gd.dqI,
        dkI: gd.dkI,
        dwI: gd.dwI,
        grads: this.g.layers[l].indexer!,
        accumulate: true,
      }),
      sumDispatch(gpu, {
        x: gd.scratch.klRows,
        n: N,
        out: this.a.indexLossAcc!,
        scale: gradScale,
        accumulate: !(m === 0 && l === c.nLayers - 1),
      }),
    ];
  }

  /** A window or MoBA layer's tensors (src/model/mechanisms.ts). */
  private mechanismIO(l: number): MechanismIO {
    const L = this.a.layers[l];
    return { q: L.q, k: L.kv[0].k, v: L.kv[0].v, out: L.attn, lse: L.lse!, moba: L.moba, kernels: this.nsaKernels };
  }

  /** Attention forward of layer l after its input norm: writes the layer's attn [N, H·dv]. */
  private attentionForward(l: number, m: number, mode: Mode, phase: DsaPhase): PendingDispatches {
    const { c, N, gpu } = this;
    const { B, T } = this.s;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const L = this.a.layers[l];
    const out = this.projections(l);
    if (c.attention === 'dense') {
      out.push(
        attentionForwardDispatch(gpu, { q: L.q, k: L.kv[0].k, v: L.kv[0].v, out: L.attn, lse: L.lse!, B, T, H, G, dk: c.dk, dv: c.dv }),
      );
      return out;
    }
    if (isMechanism(c)) {
      out.push(mechanismForward(gpu, c, nsaShape(c, this.s), this.mechanismIO(l)));
      return out;
    }
    if (c.attention === 'dsa') {
      const L = this.a.layers[l].dsa!;
      out.push(
        indexerProjectDispatches(gpu, { ...this.indexerRows(l), W: this.p.layers[l].indexer!, qI: L.qI, kI: L.kI, wI: L.wI }),
        dsaForwardDispatches(gpu, c.dsa!, nsaShape(c, this.s), phase, this.dsaIO(l)),
      );
      return out;
    }
    const nsa = c.nsa!;
    const gates = this.p.layers[l].gates!;
    const scratch = this.a.grads.nsa!;
    out.push(
      this.mm({ a: L.attnNormed, b: gates.wg, c: scratch.gateLogits, M: N, K: c.dim, N: 3 * H, label: `l${l}.gate` }),
      gateForwardDispatch(gpu, { logits: scratch.gateLogits, bias: gates.bg, gates: L.nsa!.gates, rows: N, H, ablation: nsa.gates }),
      nsaCoreForward(gpu, nsaShape(c, this.s), nsa, this.nsaIO(l), scratch.core),
    );
    // Statistics of the step's last micro-batch (gate means, selection histogram, invalid count).
    if (mode === 'train' && m === this.s.gradAccum - 1) {
      out.push(
        nsaStatsDispatches(gpu, {
          gates: L.nsa!.gates,
          sel: L.nsa!.core.sel,
          keysRead: L.nsa!.keysRead,
          stats: L.nsa!.stats,
          B,
          T,
          H,
          G,
          cfg: nsa,
          maxDistance: nsaStatsMaxDistance(c),
        }),
      );
    }
    return out;
  }

  /**
   * Attention backward of layer l: from grads.dattn to grads.dnormed (overwritten) and the weight
   * grads (DSA: the sparse phase's, with the indexer's own loss and gradients).
   */
  private attentionBackward(l: number, m: number): PendingDispatches {
    const { c, N, gpu } = this;
    const { B, T } = this.s;
    const C = c.dim;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const w = this.p.layers[l];
    const gw = this.g.layers[l];
    const L = this.a.layers[l];
    const d = this.a.grads;
    const dn = d.dnormed;
    const out: PendingDispatches = [];
    // Gradients of the (RoPE'd) k/v of each branch: dense one pair, NSA one per branch.
    const dkv = c.attention === 'nsa' ? d.dkv : d.dkv.slice(0, 1);
    if (c.attention === 'dsa') out.push(...this.dsaBackward(l, m, 'sparse'));
    else if (isMechanism(c)) {
      out.push(
        mechanismBackward(gpu, c, nsaShape(c, this.s), this.mechanismIO(l), {
          dout: d.dattn,
          delta: d.delta,
          dq: d.dq,
          dk: dkv[0].k,
          dv: dkv[0].v,
          headParts: d.headParts,
          reverse: d.mobaReverse,
        }),
      );
    } else if (c.attention === 'dense') {
      out.push(
        attentionBackwardDispatches(gpu, {
          q: L.q,
          k: L.kv[0].k,
          v: L.kv[0].v,
          out: L.attn,
          lse: L.lse!,
          dout: d.dattn,
          delta: d.delta,
          gradQ: d.dq,
          gradK: dkv[0].k,
          gradV: dkv[0].v,
          headParts: d.headParts,
          B,
          T,
          H,
          G,
          dk: c.dk,
          dv: c.dv,
        }),
      );
    } else {
      const nsa = c.nsa!;
      out.push(
        nsaCoreBackward(gpu, nsaShape(c, this.s), nsa, this.nsaIO(l), d.nsa!.core, {
          dout: d.dattn,
          dq: d.dq,
          cmp: dkv[0],
          sel: dkv[1],
          win: dkv[2],
          gates: { kind: 'logits', dlogits: d.nsa!.dgateLogits, dbias: gw.gates!.bg, ablation: nsa.gates },
          mlp: gw.cmpMlp,
        }),
      );
    }
    const normed = L.attnNormed;
    out.push(
      ...this.rope(d.dq, H, true),
      this.mm({ a: d.dq, b: w.wq, c: dn, M: N, K: H * c.dk, N: C, transB: true, label: `l${l}.q.dx` }),
      this.mm({ a: normed, b: d.dq, c: gw.wq, M: C, K: N, N: H * c.dk, transA: true, accumulate: true, label: `l${l}.q.dw` }),
    );
    // Each branch's k/v gradient flows into its projection; with one shared pair (dense or
    // sharedKV) the three branch gradients accumulate into the same weight gradient.
    dkv.forEach((g, i) => {
      const j = Math.min(i, w.kv.length - 1);
      const [dkName, dvName] = [dkvLabel(i, 0), dkvLabel(i, 1)];
      out.push(...this.rope(g.k, G, true));
      // Through the key convolution: its weight gradient, and the gradient of the projection before it.
      let dk = g.k;
      if (d.dkRaw) {
        const conv = this.convShape;
        out.push(
          shortConvBackwardWeightDispatch(gpu, { ...conv, dout: g.k, x: L.kRaw![j], dw: gw.kv[j].kConv!, accumulate: true }),
          shortConvBackwardInputDispatch(gpu, { ...conv, w: w.kv[j].kConv!, dout: g.k, dx: d.dkRaw }),
        );
        dk = d.dkRaw;
      }
      out.push(
        this.mm({ a: dk, b: w.kv[j].wk, c: dn, M: N, K: G * c.dk, N: C, transB: true, accumulate: true, label: `l${l}.${dkName}.dx` }),
        this.mm({ a: g.v, b: w.kv[j].wv, c: dn, M: N, K: G * c.dv, N: C, transB: true, accumulate: true, label: `l${l}.${dvName}.dx` }),
        this.mm({
          a: normed,
          b: dk,
          c: gw.kv[j].wk,
          M: C,
          K: N,
          N: G * c.dk,
          transA: true,
          accumulate: true,
          label: `l${l}.${dkName}.dw`,
        }),
        this.mm({
          a: normed,
          b: g.v,
          c: gw.kv[j].wv,
          M: C,
          K: N,
          N: G * c.dv,
          transA: true,
          accumulate: true,
          label: `l${l}.${dvName}.dw`,
        }),
      );
    });
    if (c.attention === 'nsa') {
      const dgl = d.nsa!.dgateLogits;
      out.push(
        this.mm({ a: dgl, b: w.gates!.wg, c: dn, M: N, K: 3 * H, N: C, transB: true, accumulate: true, label: `l${l}.gate.dx` }),
        this.mm({ a: normed, b: dgl, c: gw.gates!.wg, M: C, K: N, N: 3 * H, transA: true, accumulate: true, label: `l${l}.gate.dw` }),
      );
    }
    return out;
  }

  /**
   * Forward of micro-batch m. 'train' accumulates the step's mean loss; 'eval' writes the eval
   * loss; both turn the logits into dlogits in place. 'logits' stops at the LM head.
   */
  forward(m: number, mode: Mode, phase: DsaPhase = 'sparse'): Promise<Dispatch[]> {
    const { c, N, gpu } = this;
    const { dim: C, ffnHidden: F, nHeads: H, vocabSize: V } = c;
    const a = this.a;
    const out: PendingDispatches = [];
    out.push(embeddingForwardDispatch(gpu, { tokens: a.batches[m].tokens, table: this.p.wte, out: a.x[0], N, C }));
    for (let l = 0; l < c.nLayers; l++) {
      const w = this.p.layers[l];
      const L = a.layers[l];
      out.push(
        rmsnormForwardDispatch(gpu, { x: a.x[l], weight: w.attnNorm, out: L.attnNormed, rstd: L.attnRstd, rows: N, C, eps: c.normEps }),
        ...this.attentionForward(l, m, mode, phase),
      );
      const mlp = w.mlp;
      const La = L.mlp;
      // An attention-only layer's attention residual is the layer's output.
      out.push(
        this.mm({ a: L.attn, b: w.wo, c: a.proj, M: N, K: H * c.dv, N: C, label: `l${l}.o` }),
        addDispatch(gpu, a.x[l], a.proj, mlp ? L.xMid : a.x[l + 1], N * C),
      );
      if (mlp && La)
        out.push(
          rmsnormForwardDispatch(gpu, { x: L.xMid, weight: mlp.norm, out: La.normed, rstd: La.rstd, rows: N, C, eps: c.normEps }),
          this.mm({ a: La.normed, b: mlp.w1, c: La.a, M: N, K: C, N: F, label: `l${l}.w1` }),
          this.mm({ a: La.normed, b: mlp.w3, c: La.b, M: N, K: C, N: F, label: `l${l}.w3` }),
          swigluForwardDispatch(gpu, { a: La.a, b: La.b, out: La.h, n: N * F }),
          this.mm({ a: La.h, b: mlp.w2, c: a.proj, M: N, K: F, N: C, label: `l${l}.w2` }),
          addDispatch(gpu, L.xMid, a.proj, a.x[l + 1], N * C),
        );
    }
    out.push(
      rmsnormForwardDispatch(gpu, {
        x: a.x[c.nLayers],
        weight: this.p.finalNorm,
        out: a.finalNormed,
        rstd: a.finalRstd,
        rows: N,
        C,
        eps: c.normEps,
      }),
      // Tied embeddings: logits = final_normed · wteᵀ.
      this.mm({ a: a.finalNormed, b: this.p.wte, c: a.logits, M: N, K: C, N: V, transB: true, label: 'lm_head' }),
    );
    if (mode === 'logits') return settle(out);
    const scale = lossScale(this.s, mode);
    out.push(
      // Loss and dlogits in one pass; dlogits overwrite the logits in place.
      crossEntropyDispatch(gpu, {
        logits: a.logits,
        targets: a.batches[m].targets,
        losses: a.losses,
        dlogits: a.logits,
        N,
        V,
        gradScale: scale,
      }),
      mode === 'train'
        ? sumDispatch(gpu, { x: a.losses, n: N, out: a.lossAcc, scale, accumulate: m > 0 })
        : sumDispatch(gpu, { x: a.losses, n: N, out: a.valLoss, scale, accumulate: false }),
    );
    return settle(out);
  }

  /**
   * Backward of micro-batch m. DSA's warm-up (docs/dsa-spec.md section 5): the main model is frozen,
   * so only each layer's indexer loss and its backward into the indexer's weights run.
   */
  backward(m: number, phase: DsaPhase = 'sparse'): Promise<Dispatch[]> {
    const { c, N, gpu } = this;
    const { dim: C, ffnHidden: F, nHeads: H, vocabSize: V } = c;
    const a = this.a;
    const d = a.grads;
    const out: PendingDispatches = [];
    if (c.attention === 'dsa' && phase === 'warmup') {
      for (let l = c.nLayers - 1; l >= 0; l--) out.push(...this.dsaBackward(l, m, 'warmup'));
      return settle(out);
    }
    const dx = d.dx;
    const dn = d.dnormed;
    // LM head (tied): dnormed = dlogits · wte ; dwte += dlogitsᵀ · final_normed.
    out.push(
      this.mm({ a: a.logits, b: this.p.wte, c: dn, M: N, K: V, N: C, label: 'lm_head.dx' }),
      this.mm({ a: a.logits, b: a.finalNormed, c: this.g.wte, M: V, K: N, N: C, transA: true, accumulate: true, label: 'lm_head.dw' }),
      rmsnormBackwardDispatches(gpu, {
        dout: dn,
        x: a.x[c.nLayers],
        weight: this.p.finalNorm,
        rstd: a.finalRstd,
        dx,
        dweight: this.g.finalNorm,
        rows: N,
        C,
        accumulateDx: false,
      }),
    );
    for (let l = c.nLayers - 1; l >= 0; l--) {
      const w = this.p.layers[l];
      const gw = this.g.layers[l];
      const L = a.layers[l];
      // MLP: x_{l+1} = x_mid + w2(silu(w1 n) * w3 n), n = norm(x_mid). dx holds d x_{l+1}
      // (= d x_mid in an attention-only layer, which skips this).
      const [mlp, gm, La, dm] = [w.mlp, gw.mlp, L.mlp, d.mlp];
      if (mlp && gm && La && dm)
        out.push(
          this.mm({ a: dx, b: mlp.w2, c: dm.dh, M: N, K: C, N: F, transB: true, label: `l${l}.w2.dx` }),
          this.mm({ a: La.h, b: dx, c: gm.w2, M: F, K: N, N: C, transA: true, accumulate: true, label: `l${l}.w2.dw` }),
          swigluBackwardDispatch(gpu, { dout: dm.dh, a: La.a, b: La.b, da: dm.da, db: dm.db, n: N * F }),
          this.mm({ a: dm.da, b: mlp.w1, c: dn, M: N, K: F, N: C, transB: true, label: `l${l}.w1.dx` }),
          this.mm({ a: dm.db, b: mlp.w3, c: dn, M: N, K: F, N: C, transB: true, accumulate: true, label: `l${l}.w3.dx` }),
          this.mm({ a: La.normed, b: dm.da, c: gm.w1, M: C, K: N, N: F, transA: true, accumulate: true, label: `l${l}.w1.dw` }),
          this.mm({ a: La.normed, b: dm.db, c: gm.w3, M: C, K: N, N: F, transA: true, accumulate: true, label: `l${l}.w3.dw` }),
          rmsnormBackwardDispatches(gpu, {
            dout: dn,
            x: L.xMid,
            weight: mlp.norm,
            rstd: La.rstd,
            dx,
            dweight: gm.norm,
            rows: N,
            C,
            accumulateDx: true,
          }),
        );
      // Attention: x_mid = x_l + wo(attention(n)), n = norm(x_l). dx holds d x_mid.
      out.push(
        this.mm({ a: dx, b: w.wo, c: d.dattn, M: N, K: C, N: H * c.dv, transB: true, label: `l${l}.o.dx` }),
        this.mm({ a: L.attn, b: dx, c: gw.wo, M: H * c.dv, K: N, N: C, transA: true, accumulate: true, label: `l${l}.o.dw` }),
        ...this.attentionBackward(l, m),
        rmsnormBackwardDispatches(gpu, {
          dout: dn,
          x: a.x[l],
          weight: w.attnNorm,
          rstd: L.attnRstd,
          dx,
          dweight: gw.attnNorm,
          rows: N,
          C,
          accumulateDx: true,
        }),
      );
    }
    out.push(embeddingBackwardDispatch(gpu, { index: a.batches[m].tokenIndex, dout: dx, dtable: this.g.wte, N, C }));
    return settle(out);
  }
}

type Mode = 'train' | 'eval' | 'logits';
