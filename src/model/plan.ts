// The model plan: arenas sized from the config at init, and every dispatch of a training step
// prebuilt (forward and backward per micro-batch, then grad-norm and AdamW). The step itself only
// encodes these lists; it creates nothing.
import { createArena, type Arena, type BufferSlice } from '../gpu/arena';
import { GpuContext, type Dispatch } from '../gpu/context';
import { buildTokenIndex } from '../kernels/embedding-index';
import type { UniformSlot } from '../gpu/uniforms';
import { adamwDispatch, adamwHyperWords } from '../kernels/adamw';
import { attentionBackwardDispatches, attentionForwardDispatch } from '../kernels/attention';
import { crossEntropyDispatch } from '../kernels/crossentropy';
import { embeddingBackwardDispatch, embeddingForwardDispatch } from '../kernels/embedding';
import { gradNormDispatches, gradNormPartialsLength, type GradRange } from '../kernels/gradnorm';
import { matmulDispatch, type MatmulArgs } from '../kernels/matmul';
import { sumDispatch } from '../kernels/reduce';
import { addDispatch } from '../kernels/residual';
import { rmsnormBackwardDispatches, rmsnormForwardDispatch } from '../kernels/rmsnorm';
import { ropeDispatch } from '../kernels/rope';
import { swigluBackwardDispatch, swigluForwardDispatch } from '../kernels/swiglu';
import { gateForwardDispatch } from '../kernels/nsa-gates';
import { nsaStatsDispatches } from '../kernels/nsa-stats';
import {
  nsaCoreBackward,
  nsaCoreForward,
  nsaCoreSavedSlices,
  nsaCoreScratchSlices,
  type NsaCoreIO,
  type NsaCoreScratch,
} from './nsa/core';
import { act, activationEntries, kvNames, nsaShape, nsaStatsMaxDistance, type PlanShape } from './activations';
import { assertValidModelConfig, type ModelConfig } from '../spec/model-config';
import { EMBEDDING, FINAL_NORM, layerParamNames, numel, paramSpecs, type ParamSpec } from '../spec/params';

export interface OptimizerSettings {
  gradClip: number;
  weightDecay: number;
}

/**
 * The factor turning per-row losses into the step's mean loss (and the cross-entropy's gradScale):
 * one over the scored targets of a micro-batch, times the micro-batches of a training step.
 */
export function lossScale(s: PlanShape, mode: 'train' | 'eval'): number {
  return 1 / (s.B * s.scoredPerSequence * (mode === 'train' ? s.gradAccum : 1));
}

export class ModelPlan {
  private constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    readonly shape: PlanShape,
    readonly specs: readonly ParamSpec[],
    readonly params: Arena,
    readonly grads: Arena,
    readonly adamM: Arena,
    readonly adamV: Arena,
    readonly acts: Arena,
    /** Per micro-batch: forward then backward. */
    readonly microSteps: readonly Dispatch[][],
    /** Grad-norm, clip scale and AdamW over every tensor. */
    readonly optimizer: readonly Dispatch[],
    /** Forward only on micro-batch 0's tokens, mean loss into `val_loss`. */
    readonly evalForward: readonly Dispatch[],
    /** Per-step AdamW hyperparameters (learning rate, step), rewritten before each submit. */
    readonly hyper: UniformSlot,
  ) {}

  /**
   * `scoredPerSequence`: how many targets of each sequence the loss counts (a dataset that scores
   * only some positions writes IGNORE_TARGET at the others); the loss is the mean over those.
   */
  static async build(
    gpu: GpuContext,
    config: ModelConfig,
    batchSize: number,
    gradAccum: number,
    opt: OptimizerSettings,
    scoredPerSequence: number = config.seqLen,
  ): Promise<ModelPlan> {
    assertValidModelConfig(config);
    const T = config.seqLen;
    if (!(Number.isInteger(scoredPerSequence) && scoredPerSequence >= 1 && scoredPerSequence <= T))
      throw new Error(`ModelPlan: scoredPerSequence must be an integer in [1, seqLen = ${T}] (got ${scoredPerSequence})`);
    const shape: PlanShape = { B: batchSize, T, N: batchSize * T, gradAccum, scoredPerSequence };
    const specs = paramSpecs(config);
    const entries = specs.map((s) => ({ name: s.name, bytes: 4 * numel(s.shape) }));
    const params = createArena(gpu, 'params', entries);
    const grads = createArena(gpu, 'grads', entries);
    const adamM = createArena(gpu, 'adam_m', entries);
    const adamV = createArena(gpu, 'adam_v', entries);
    const ranges: GradRange[] = specs.map((s) => ({ slice: grads.get(s.name), n: numel(s.shape) }));
    const acts = createArena(gpu, 'activations', [
      ...activationEntries(config, shape),
      { name: 'gradnorm_partials', bytes: 4 * gradNormPartialsLength(ranges) },
    ]);
    const builder = new StepBuilder(gpu, config, shape, params, grads, acts);
    const micro = Array.from({ length: gradAccum }, (_, m) => settle([builder.forward(m, 'train'), builder.backward(m)]));
    const evalList = builder.forward(0, 'eval');
    const hyper = gpu.uniform(adamwHyperWords({ lr: 0, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: opt.weightDecay, step: 1 }));
    const stats = acts.get('grad_stats');
    const optimizerList: PendingDispatches = [
      gradNormDispatches(gpu, { ranges, partials: acts.get('gradnorm_partials'), stats, maxNorm: opt.gradClip }),
    ];
    for (const s of specs) {
      optimizerList.push(
        adamwDispatch(gpu, {
          param: params.get(s.name),
          grad: grads.get(s.name),
          m: adamM.get(s.name),
          v: adamV.get(s.name),
          n: numel(s.shape),
          decay: s.decay,
          hyper,
          stats,
        }),
      );
    }
    const [microSteps, evalForward, optimizer] = await Promise.all([Promise.all(micro), evalList, settle(optimizerList)]);
    return new ModelPlan(gpu, config, shape, specs, params, grads, adamM, adamV, acts, microSteps, optimizer, evalForward, hyper);
  }

  /** Total bytes of all arenas (constant after init). */
  get gpuBytes(): number {
    return [this.params, this.grads, this.adamM, this.adamV, this.acts].reduce((a, r) => a + r.totalBytes, 0);
  }

  uploadParams(values: ReadonlyMap<string, Float32Array>): void {
    for (const s of this.specs) {
      const v = values.get(s.name);
      if (!v) throw new Error(`no initial value for parameter ${s.name}`);
      if (v.length !== numel(s.shape)) throw new Error(`parameter ${s.name}: ${v.length} values for shape [${s.shape}]`);
      this.gpu.write(this.params.get(s.name), v);
    }
  }

  async readArena(arena: Arena): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const s of this.specs) out.set(s.name, await this.gpu.readF32(arena.get(s.name), numel(s.shape)));
    return out;
  }

  /** Clears the gradient arena (encoder-level: no pass may be open). */
  encodeZeroGrads(enc: GPUCommandEncoder): void {
    for (const b of this.grads.buffers) enc.clearBuffer(b);
  }

  /**
   * Uploads micro-batch m's tokens, targets and the embedding backward's token index (built into
   * `indexScratch`, tokenIndexLength(N) ints, so the step allocates nothing).
   */
  writeBatch(m: number, tokens: Int32Array, targets: Int32Array, indexScratch: Int32Array): void {
    buildTokenIndex(tokens, indexScratch);
    this.gpu.write(this.acts.get(act.tokens(m)), tokens);
    this.gpu.write(this.acts.get(act.targets(m)), targets);
    this.gpu.write(this.acts.get(act.tokenIndex(m)), indexScratch);
  }

  /** Zeroes the gradients and runs forward + backward of every micro-batch (no optimizer): tests, probes. */
  runForwardBackward(): void {
    const enc = this.gpu.device.createCommandEncoder({ label: 'forward+backward' });
    this.encodeZeroGrads(enc);
    const pass = enc.beginComputePass();
    for (const micro of this.microSteps) GpuContext.encode(pass, micro);
    pass.end();
    this.gpu.submit([enc.finish()]);
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

function zip<A, B>(a: readonly A[], b: readonly B[]): Array<[A, B]> {
  return a.map((x, i) => [x, b[i]]);
}

/** Builds the layer-by-layer dispatch lists (llm.c style: every step written out). */
class StepBuilder {
  private readonly N: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly c: ModelConfig,
    private readonly s: PlanShape,
    private readonly params: Arena,
    private readonly grads: Arena,
    private readonly acts: Arena,
  ) {
    this.N = s.N;
  }

  private p = (name: string): BufferSlice => this.params.get(name);
  private g = (name: string): BufferSlice => this.grads.get(name);
  private a = (name: string): BufferSlice => this.acts.get(name);

  private mm(args: Omit<MatmulArgs, 'label'> & { label: string }): Promise<Dispatch> {
    return matmulDispatch(this.gpu, args);
  }

  /** q, k, v projections with RoPE on q and k (dense: one K/V pair; NSA: one per branch or shared). */
  private projections(l: number): PendingDispatches {
    const { c, N } = this;
    const { T } = this.s;
    const C = c.dim;
    const w = layerParamNames(l);
    const L = (x: string) => this.a(act.layer(l, x));
    const normed = L('attn_normed');
    const rope = (x: BufferSlice, heads: number) =>
      ropeDispatch(this.gpu, { x, out: x, rows: N, T, heads, headDim: c.dk, theta: c.ropeTheta, inverse: false });
    const out: PendingDispatches = [
      this.mm({ a: normed, b: this.p(w.wq), c: L('q'), M: N, K: C, N: c.nHeads * c.dk, label: `l${l}.q` }),
      rope(L('q'), c.nHeads),
    ];
    for (const [[kName, vName], [wk, wv]] of zip(kvNames(c), this.kvWeights(l))) {
      out.push(
        this.mm({ a: normed, b: this.p(wk), c: L(kName), M: N, K: C, N: c.nKvGroups * c.dk, label: `l${l}.${kName}` }),
        this.mm({ a: normed, b: this.p(wv), c: L(vName), M: N, K: C, N: c.nKvGroups * c.dv, label: `l${l}.${vName}` }),
        rope(L(kName), c.nKvGroups),
      );
    }
    return out;
  }

  /** Weight names of the K/V projections, in kvNames order. */
  private kvWeights(l: number): Array<[string, string]> {
    const w = layerParamNames(l);
    return kvNames(this.c).length === 1 ? [[w.wk, w.wv]] : (['cmp', 'sel', 'win'] as const).map((b) => [w.branchKV[b].wk, w.branchKV[b].wv]);
  }

  /** The K/V slices each NSA branch reads (shared KV: the same pair thrice). */
  private branchKV(l: number, names: Array<[string, string]>) {
    const L = (x: string) => this.a(act.layer(l, x));
    const pick = (i: number) => ({ k: L(names[Math.min(i, names.length - 1)][0]), v: L(names[Math.min(i, names.length - 1)][1]) });
    return { cmp: pick(0), sel: pick(1), win: pick(2) };
  }

  private nsaIO(l: number): NsaCoreIO {
    const nsa = this.c.nsa!;
    const L = (x: string) => this.a(act.layer(l, x));
    const w = layerParamNames(l);
    const mlpSlices = (which: 'k' | 'v', get: (n: string) => BufferSlice) => {
      const m = w.cmpMlp[which];
      return { pos: get(m.pos), w1: get(m.w1), b1: get(m.b1), w2: get(m.w2), b2: get(m.b2) };
    };
    return {
      q: L('q'),
      ...this.branchKV(l, kvNames(this.c)),
      gates: L('gates'),
      out: L('attn'),
      saved: nsaCoreSavedSlices(act.layer(l, 'nsa.'), this.a, nsa),
      mlp: nsa.phi === 'mlp' ? { k: mlpSlices('k', this.p), v: mlpSlices('v', this.p) } : undefined,
    };
  }

  /** Attention forward of layer l after its input norm: writes `l.attn` [N, H·dv]. */
  private attentionForward(l: number, m: number, mode: 'train' | 'eval'): PendingDispatches {
    const { c, N, gpu } = this;
    const { B, T } = this.s;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const L = (x: string) => this.a(act.layer(l, x));
    const out = this.projections(l);
    if (c.attention === 'dense') {
      out.push(attentionForwardDispatch(gpu, { q: L('q'), k: L('k'), v: L('v'), out: L('attn'), lse: L('lse'), B, T, H, G, dk: c.dk, dv: c.dv }));
      return out;
    }
    const nsa = c.nsa!;
    const w = layerParamNames(l);
    const shape = nsaShape(c, this.s);
    out.push(
      this.mm({ a: L('attn_normed'), b: this.p(w.wg), c: this.a('gate_logits'), M: N, K: c.dim, N: 3 * H, label: `l${l}.gate` }),
      gateForwardDispatch(gpu, { logits: this.a('gate_logits'), bias: this.p(w.bg), gates: L('gates'), rows: N, H, ablation: nsa.gates }),
      nsaCoreForward(gpu, shape, nsa, this.nsaIO(l), this.nsaScratch()),
    );
    // Statistics of the step's last micro-batch (gate means, selection histogram, invalid count).
    if (mode === 'train' && m === this.s.gradAccum - 1) {
      out.push(
        nsaStatsDispatches(gpu, { gates: L('gates'), sel: this.nsaIO(l).saved.sel, stats: L('nsa_stats'), B, T, H, G, cfg: nsa, maxDistance: nsaStatsMaxDistance(c) }),
      );
    }
    return out;
  }

  private nsaScratch(): NsaCoreScratch {
    return nsaCoreScratchSlices('nsa.', this.a, this.c.nsa!);
  }

  /** Attention backward of layer l: from `dattn` to `dnormed` (overwritten) and the weight grads. */
  private attentionBackward(l: number): PendingDispatches {
    const { c, N, gpu } = this;
    const { B, T } = this.s;
    const C = c.dim;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const w = layerParamNames(l);
    const L = (x: string) => this.a(act.layer(l, x));
    const dn = this.a('dnormed');
    const out: PendingDispatches = [];
    // Gradients of the (RoPE'd) k/v of each projection pair, in kvNames order.
    const gradNames: Array<[string, string]> = c.attention === 'dense' ? [['dk', 'dv']] : [['dk', 'dv'], ['dk_sel', 'dv_sel'], ['dk_win', 'dv_win']];
    if (c.attention === 'dense') {
      out.push(
        attentionBackwardDispatches(gpu, {
          q: L('q'), k: L('k'), v: L('v'), out: L('attn'), lse: L('lse'), dout: this.a('dattn'), delta: this.a('delta'),
          gradQ: this.a('dq'), gradK: this.a('dk'), gradV: this.a('dv'), B, T, H, G, dk: c.dk, dv: c.dv,
        }),
      );
    } else {
      const nsa = c.nsa!;
      const grads = (i: number) => ({ k: this.a(gradNames[i][0]), v: this.a(gradNames[i][1]) });
      const mlpSlices = (which: 'k' | 'v') => {
        const m = w.cmpMlp[which];
        return { pos: this.g(m.pos), w1: this.g(m.w1), b1: this.g(m.b1), w2: this.g(m.w2), b2: this.g(m.b2) };
      };
      out.push(
        nsaCoreBackward(gpu, nsaShape(c, this.s), nsa, this.nsaIO(l), this.nsaScratch(), {
          dout: this.a('dattn'),
          dq: this.a('dq'),
          cmp: grads(0),
          sel: grads(1),
          win: grads(2),
          gates: { kind: 'logits', dlogits: this.a('dgate_logits'), dbias: this.g(w.bg), ablation: nsa.gates },
          mlp: nsa.phi === 'mlp' ? { k: mlpSlices('k'), v: mlpSlices('v') } : undefined,
        }),
      );
    }
    const ropeInv = (x: BufferSlice, heads: number) =>
      ropeDispatch(gpu, { x, out: x, rows: N, T, heads, headDim: c.dk, theta: c.ropeTheta, inverse: true });
    const normed = L('attn_normed');
    out.push(
      ropeInv(this.a('dq'), H),
      this.mm({ a: this.a('dq'), b: this.p(w.wq), c: dn, M: N, K: H * c.dk, N: C, transB: true, label: `l${l}.q.dx` }),
      this.mm({ a: normed, b: this.a('dq'), c: this.g(w.wq), M: C, K: N, N: H * c.dk, transA: true, accumulate: true, label: `l${l}.q.dw` }),
    );
    // Each branch's k/v gradient flows into its projection; with one shared pair (dense or
    // sharedKV) the three branch gradients accumulate into the same weight gradient.
    const weights = this.kvWeights(l);
    gradNames.forEach(([dkName, dvName], i) => {
      const [wk, wv] = weights[Math.min(i, weights.length - 1)];
      out.push(
        ropeInv(this.a(dkName), G),
        this.mm({ a: this.a(dkName), b: this.p(wk), c: dn, M: N, K: G * c.dk, N: C, transB: true, accumulate: true, label: `l${l}.${dkName}.dx` }),
        this.mm({ a: this.a(dvName), b: this.p(wv), c: dn, M: N, K: G * c.dv, N: C, transB: true, accumulate: true, label: `l${l}.${dvName}.dx` }),
        this.mm({ a: normed, b: this.a(dkName), c: this.g(wk), M: C, K: N, N: G * c.dk, transA: true, accumulate: true, label: `l${l}.${dkName}.dw` }),
        this.mm({ a: normed, b: this.a(dvName), c: this.g(wv), M: C, K: N, N: G * c.dv, transA: true, accumulate: true, label: `l${l}.${dvName}.dw` }),
      );
    });
    if (c.attention === 'nsa') {
      out.push(
        this.mm({ a: this.a('dgate_logits'), b: this.p(w.wg), c: dn, M: N, K: 3 * H, N: C, transB: true, accumulate: true, label: `l${l}.gate.dx` }),
        this.mm({ a: normed, b: this.a('dgate_logits'), c: this.g(w.wg), M: C, K: N, N: 3 * H, transA: true, accumulate: true, label: `l${l}.gate.dw` }),
      );
    }
    return out;
  }

  forward(m: number, mode: 'train' | 'eval'): Promise<Dispatch[]> {
    const { c, N } = this;
    const { dim: C, ffnHidden: F, nHeads: H, vocabSize: V } = c;
    const out: PendingDispatches = [];
    const gpu = this.gpu;
    out.push(embeddingForwardDispatch(gpu, { tokens: this.a(act.tokens(m)), table: this.p(EMBEDDING), out: this.a(act.x(0)), N, C }));
    for (let l = 0; l < c.nLayers; l++) {
      const w = layerParamNames(l);
      const L = (x: string) => this.a(act.layer(l, x));
      const normed = L('attn_normed');
      out.push(
        rmsnormForwardDispatch(gpu, { x: this.a(act.x(l)), weight: this.p(w.attnNorm), out: normed, rstd: L('attn_rstd'), rows: N, C, eps: c.normEps }),
        ...this.attentionForward(l, m, mode),
      );
      out.push(
        this.mm({ a: L('attn'), b: this.p(w.wo), c: this.a('proj'), M: N, K: H * c.dv, N: C, label: `l${l}.o` }),
        addDispatch(gpu, this.a(act.x(l)), this.a('proj'), L('x_mid'), N * C),
        rmsnormForwardDispatch(gpu, { x: L('x_mid'), weight: this.p(w.mlpNorm), out: L('mlp_normed'), rstd: L('mlp_rstd'), rows: N, C, eps: c.normEps }),
        this.mm({ a: L('mlp_normed'), b: this.p(w.w1), c: L('a'), M: N, K: C, N: F, label: `l${l}.w1` }),
        this.mm({ a: L('mlp_normed'), b: this.p(w.w3), c: L('b'), M: N, K: C, N: F, label: `l${l}.w3` }),
        swigluForwardDispatch(gpu, { a: L('a'), b: L('b'), out: L('h'), n: N * F }),
        this.mm({ a: L('h'), b: this.p(w.w2), c: this.a('proj'), M: N, K: F, N: C, label: `l${l}.w2` }),
        addDispatch(gpu, L('x_mid'), this.a('proj'), this.a(act.x(l + 1)), N * C),
      );
    }
    const scale = lossScale(this.s, mode);
    out.push(
      rmsnormForwardDispatch(gpu, { x: this.a(act.x(c.nLayers)), weight: this.p(FINAL_NORM), out: this.a('final_normed'), rstd: this.a('final_rstd'), rows: N, C, eps: c.normEps }),
      // Tied embeddings: logits = final_normed · wteᵀ.
      this.mm({ a: this.a('final_normed'), b: this.p(EMBEDDING), c: this.a('logits'), M: N, K: C, N: V, transB: true, label: 'lm_head' }),
      // Loss and dlogits in one pass; dlogits overwrite the logits in place.
      crossEntropyDispatch(gpu, { logits: this.a('logits'), targets: this.a(act.targets(m)), losses: this.a('losses'), dlogits: this.a('logits'), N, V, gradScale: scale }),
      mode === 'train'
        ? sumDispatch(gpu, { x: this.a('losses'), n: N, out: this.a('loss_acc'), scale, accumulate: m > 0 })
        : sumDispatch(gpu, { x: this.a('losses'), n: N, out: this.a('val_loss'), scale, accumulate: false }),
    );
    return settle(out);
  }

  backward(m: number): Promise<Dispatch[]> {
    const { c, N } = this;
    const { dim: C, ffnHidden: F, nHeads: H, vocabSize: V } = c;
    const gpu = this.gpu;
    const out: PendingDispatches = [];
    const dx = this.a('dx');
    const dn = this.a('dnormed');
    // LM head (tied): dnormed = dlogits · wte ; dwte += dlogitsᵀ · final_normed.
    out.push(
      this.mm({ a: this.a('logits'), b: this.p(EMBEDDING), c: dn, M: N, K: V, N: C, label: 'lm_head.dx' }),
      this.mm({ a: this.a('logits'), b: this.a('final_normed'), c: this.g(EMBEDDING), M: V, K: N, N: C, transA: true, accumulate: true, label: 'lm_head.dw' }),
      rmsnormBackwardDispatches(gpu, {
        dout: dn, x: this.a(act.x(c.nLayers)), weight: this.p(FINAL_NORM), rstd: this.a('final_rstd'),
        dx, dweight: this.g(FINAL_NORM), rows: N, C, accumulateDx: false,
      }),
    );
    for (let l = c.nLayers - 1; l >= 0; l--) {
      const w = layerParamNames(l);
      const L = (x: string) => this.a(act.layer(l, x));
      // MLP: x_{l+1} = x_mid + w2(silu(w1 n) * w3 n), n = norm(x_mid). dx holds d x_{l+1}.
      out.push(
        this.mm({ a: dx, b: this.p(w.w2), c: this.a('dh'), M: N, K: C, N: F, transB: true, label: `l${l}.w2.dx` }),
        this.mm({ a: L('h'), b: dx, c: this.g(w.w2), M: F, K: N, N: C, transA: true, accumulate: true, label: `l${l}.w2.dw` }),
        swigluBackwardDispatch(gpu, { dout: this.a('dh'), a: L('a'), b: L('b'), da: this.a('da'), db: this.a('db'), n: N * F }),
        this.mm({ a: this.a('da'), b: this.p(w.w1), c: dn, M: N, K: F, N: C, transB: true, label: `l${l}.w1.dx` }),
        this.mm({ a: this.a('db'), b: this.p(w.w3), c: dn, M: N, K: F, N: C, transB: true, accumulate: true, label: `l${l}.w3.dx` }),
        this.mm({ a: L('mlp_normed'), b: this.a('da'), c: this.g(w.w1), M: C, K: N, N: F, transA: true, accumulate: true, label: `l${l}.w1.dw` }),
        this.mm({ a: L('mlp_normed'), b: this.a('db'), c: this.g(w.w3), M: C, K: N, N: F, transA: true, accumulate: true, label: `l${l}.w3.dw` }),
        rmsnormBackwardDispatches(gpu, {
          dout: dn, x: L('x_mid'), weight: this.p(w.mlpNorm), rstd: L('mlp_rstd'), dx, dweight: this.g(w.mlpNorm), rows: N, C, accumulateDx: true,
        }),
      );
      // Attention: x_mid = x_l + wo(attention(n)), n = norm(x_l). dx holds d x_mid.
      out.push(
        this.mm({ a: dx, b: this.p(w.wo), c: this.a('dattn'), M: N, K: C, N: H * c.dv, transB: true, label: `l${l}.o.dx` }),
        this.mm({ a: L('attn'), b: dx, c: this.g(w.wo), M: H * c.dv, K: N, N: C, transA: true, accumulate: true, label: `l${l}.o.dw` }),
        ...this.attentionBackward(l),
        rmsnormBackwardDispatches(gpu, {
          dout: dn, x: this.a(act.x(l)), weight: this.p(w.attnNorm), rstd: L('attn_rstd'), dx, dweight: this.g(w.attnNorm), rows: N, C, accumulateDx: true,
        }),
      );
    }
    out.push(embeddingBackwardDispatch(gpu, { index: this.a(act.tokenIndex(m)), dout: dx, dtable: this.g(EMBEDDING), N, C }));
    return settle(out);
  }
}
