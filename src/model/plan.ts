// The model plan: arenas sized from the config at init, and every dispatch of a training step
// prebuilt (forward and backward per micro-batch, then grad-norm and AdamW). The step itself only
// encodes these lists; it creates nothing.
import { createArena, type Arena, type BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
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
import { act, activationEntries, type PlanShape } from './activations';
import { assertValidModelConfig, type ModelConfig } from './config';
import { EMBEDDING, FINAL_NORM, layerParamNames, numel, paramSpecs, type ParamSpec } from './params';

export interface OptimizerSettings {
  gradClip: number;
  weightDecay: number;
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

  static async build(gpu: GpuContext, config: ModelConfig, batchSize: number, gradAccum: number, opt: OptimizerSettings): Promise<ModelPlan> {
    assertValidModelConfig(config);
    if (config.attention !== 'dense') throw new Error(`model.attention '${config.attention}' has no GPU plan yet`);
    const T = config.seqLen;
    const shape: PlanShape = { B: batchSize, T, N: batchSize * T, gradAccum };
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

  /** Clears gradients and (on the first step) nothing else: encoder-level, no pass open. */
  encodeZeroGrads(enc: GPUCommandEncoder): void {
    for (const b of this.grads.buffers) enc.clearBuffer(b);
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

  forward(m: number, mode: 'train' | 'eval'): Promise<Dispatch[]> {
    const { c, N } = this;
    const { B, T } = this.s;
    const C = c.dim;
    const F = c.ffnHidden;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const out: PendingDispatches = [];
    const gpu = this.gpu;
    out.push(embeddingForwardDispatch(gpu, { tokens: this.a(act.tokens(m)), table: this.p(EMBEDDING), out: this.a(act.x(0)), N, C }));
    for (let l = 0; l < c.nLayers; l++) {
      const w = layerParamNames(l);
      const L = (x: string) => this.a(act.layer(l, x));
      const normed = L('attn_normed');
      out.push(
        rmsnormForwardDispatch(gpu, { x: this.a(act.x(l)), weight: this.p(w.attnNorm), out: normed, rstd: L('attn_rstd'), rows: N, C, eps: c.normEps }),
        this.mm({ a: normed, b: this.p(w.wq), c: L('q'), M: N, K: C, N: H * c.dk, label: `l${l}.q` }),
        this.mm({ a: normed, b: this.p(w.wk), c: L('k'), M: N, K: C, N: G * c.dk, label: `l${l}.k` }),
        this.mm({ a: normed, b: this.p(w.wv), c: L('v'), M: N, K: C, N: G * c.dv, label: `l${l}.v` }),
        ropeDispatch(gpu, { x: L('q'), out: L('q'), rows: N, T, heads: H, headDim: c.dk, theta: c.ropeTheta, inverse: false }),
        ropeDispatch(gpu, { x: L('k'), out: L('k'), rows: N, T, heads: G, headDim: c.dk, theta: c.ropeTheta, inverse: false }),
        attentionForwardDispatch(gpu, { q: L('q'), k: L('k'), v: L('v'), out: L('attn'), lse: L('lse'), B, T, H, G, dk: c.dk, dv: c.dv }),
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
    const V = c.vocabSize;
    const scale = 1 / (N * (mode === 'train' ? this.s.gradAccum : 1));
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
    const { B, T } = this.s;
    const C = c.dim;
    const F = c.ffnHidden;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const V = c.vocabSize;
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
      // Attention: x_mid = x_l + wo(attn(rope(wq n), rope(wk n), wv n)), n = norm(x_l). dx holds d x_mid.
      out.push(
        this.mm({ a: dx, b: this.p(w.wo), c: this.a('dattn'), M: N, K: C, N: H * c.dv, transB: true, label: `l${l}.o.dx` }),
        this.mm({ a: L('attn'), b: dx, c: this.g(w.wo), M: H * c.dv, K: N, N: C, transA: true, accumulate: true, label: `l${l}.o.dw` }),
        attentionBackwardDispatches(gpu, {
          q: L('q'), k: L('k'), v: L('v'), out: L('attn'), lse: L('lse'), dout: this.a('dattn'), delta: this.a('delta'),
          gradQ: this.a('dq'), gradK: this.a('dk'), gradV: this.a('dv'), B, T, H, G, dk: c.dk, dv: c.dv,
        }),
        ropeDispatch(gpu, { x: this.a('dq'), out: this.a('dq'), rows: N, T, heads: H, headDim: c.dk, theta: c.ropeTheta, inverse: true }),
        ropeDispatch(gpu, { x: this.a('dk'), out: this.a('dk'), rows: N, T, heads: G, headDim: c.dk, theta: c.ropeTheta, inverse: true }),
        this.mm({ a: this.a('dq'), b: this.p(w.wq), c: dn, M: N, K: H * c.dk, N: C, transB: true, label: `l${l}.q.dx` }),
        this.mm({ a: this.a('dk'), b: this.p(w.wk), c: dn, M: N, K: G * c.dk, N: C, transB: true, accumulate: true, label: `l${l}.k.dx` }),
        this.mm({ a: this.a('dv'), b: this.p(w.wv), c: dn, M: N, K: G * c.dv, N: C, transB: true, accumulate: true, label: `l${l}.v.dx` }),
        this.mm({ a: L('attn_normed'), b: this.a('dq'), c: this.g(w.wq), M: C, K: N, N: H * c.dk, transA: true, accumulate: true, label: `l${l}.q.dw` }),
        this.mm({ a: L('attn_normed'), b: this.a('dk'), c: this.g(w.wk), M: C, K: N, N: G * c.dk, transA: true, accumulate: true, label: `l${l}.k.dw` }),
        this.mm({ a: L('attn_normed'), b: this.a('dv'), c: this.g(w.wv), M: C, K: N, N: G * c.dv, transA: true, accumulate: true, label: `l${l}.v.dw` }),
        rmsnormBackwardDispatches(gpu, {
          dout: dn, x: this.a(act.x(l)), weight: this.p(w.attnNorm), rstd: L('attn_rstd'), dx, dweight: this.g(w.attnNorm), rows: N, C, accumulateDx: true,
        }),
      );
    }
    out.push(embeddingBackwardDispatch(gpu, { index: this.a(act.tokenIndex(m)), dout: dx, dtable: this.g(EMBEDDING), N, C }));
    return settle(out);
  }
}
