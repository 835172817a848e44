// Token-by-token decode on the GPU (llm.c's inference loop, with NSA's per-branch caches): B
// sequences in lockstep, one new token each per step. Per layer and branch a KV cache lives on the
// GPU — dense: K/V for every position; NSA: the compression, selection and window K/V (one shared
// pair with sharedKV; otherwise the window keeps a ring of w rows) and the compressed cache, which
// the step that completes a block appends to (the spec's emission rule). Every dispatch is built
// once; a step writes the position and the tokens, encodes one pass, submits once and (when asked)
// maps one preallocated staging buffer: nothing is allocated per token. DSA (docs/dsa-spec.md
// section 7): per layer the K/V cache and the indexer key cache; the step projects qI, kI, wI,
// scores the cached indexer keys, takes the top-k (decode_dsa.wgsl) and attends over the selected
// tokens (decode_attend.wgsl's SEL branch with one-token blocks); the kernels count both reads.
// The float64 oracle is ModelDecoder (src/reference/decoder.ts); tests/gpu/decode.test.ts checks
// this against it and against the training forward at every position.
import { indexScale } from '../definitions/dsa-config';
import { attentionNsaConfig } from '../definitions/mechanisms';
import { assertValidModelConfig, type ModelConfig, shortConvTaps, usesRope } from '../definitions/model-config';
import { numCmpBlocks, numSelBlocks } from '../definitions/nsa-blocks';
import { cmpMlpHidden } from '../definitions/nsa-config';
import { numel } from '../definitions/params';
import { type ArenaEntry, type BufferSlice, createLayoutArena, layoutEntries, type PlaceTensor } from '../gpu/arena';
import { type Dispatch, GpuContext } from '../gpu/context';
import {
  appendKVGroupDispatch,
  appendTableWords,
  attendPartialsLength,
  attendSplits,
  decodeAttendDispatches,
  decodeDsaDispatches,
  decodeDsaLanes,
  decodeIndexChunks,
  type DecodeParams,
  decodeParams,
  decodeRowsDispatch,
  decodeSelectDispatches,
  matvecDispatch,
  matvecGroupDispatch,
  matvecGroupPartialsLength,
  matvecGroupTableWords,
  type MatvecMember,
  matvecPartialsLength,
  matvecSplits,
} from '../kernels/decode';
import { embeddingForwardDispatch } from '../kernels/embedding';
import type { NsaAttnVariant } from '../kernels/nsa-attention';
import { combineForwardDispatch, gateForwardDispatch } from '../kernels/nsa-gates';
import { rmsnormForwardDispatch } from '../kernels/rmsnorm';
import { identityRopeTable, ropeTable } from '../kernels/rope';
import { swigluForwardDispatch } from '../kernels/swiglu';
import { type LayerParams, paramLayout, type ParamTensors } from '../model/param-tensors';

/** Key rows read by one (layer, sequence, group) for the last token: per branch, and dense. */
export const READ_SLOTS = ['cmp', 'sel', 'win', 'dense'] as const;

export interface GpuDecodeOutput {
  /** Position of the tokens just fed. */
  t: number;
  /** Next-token logits [B, vocabSize] (valid until the next step). */
  logits: Float32Array;
  /** NSA: selected blocks int32 [nLayers, B, G, nSel], ascending, −1 padded (all −1 for dense); DSA: selected tokens [nLayers, B, G, k]. */
  selection: Int32Array;
  /** Key rows read, u32 [nLayers, B, G, 4] in READ_SLOTS order (DSA: its main K/V rows in 'sel'). */
  reads: Uint32Array;
  /** DSA: indexer key rows read, u32 [nLayers, B] (once per layer, not per group); all 0 otherwise. */
  indexReads: Uint32Array;
}

export interface GpuDecoderOptions {
  /** Sequences decoded together (default 1). */
  batch?: number;
  /** Most positions the caches hold (default and maximum: the context length). */
  capacity?: number;
  /**
   * The NSA / MoBA selection kernels: 'group' (what GPUs run: split over many workgroups) or
   * 'simple' (what software adapters run: one invocation per (b, g)); default by adapter, as the
   * training plan's nsaKernels. Same bits either way; tests set it to run both on one adapter.
   */
  nsaKernels?: NsaAttnVariant;
}

const F32 = 4;

export class GpuDecoder {
  private len = 0;
  private readonly stateWords = new Uint32Array(4);
  private readonly tokenWords: Int32Array;
  private readonly logits: Float32Array;
  private readonly selection: Int32Array;
  private readonly reads: Uint32Array;
  private readonly indexReads: Uint32Array;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    readonly batch: number,
    readonly capacity: number,
    private readonly params: ParamTensors,
    private readonly work: DecodeWork,
    private readonly buffers: readonly GPUBuffer[],
    /**
     * One step's dispatches, in order (for benchmarks that time them one by one: they read the
     * position and tokens the last step wrote, so running them again repeats that step).
     */
    readonly dispatches: readonly Dispatch[],
    /** The compression dispatches among them (every layer's, in order): seek rebuilds the compressed caches with them. */
    private readonly compress: readonly Dispatch[],
    private readonly staging: GPUBuffer,
  ) {
    this.tokenWords = new Int32Array(batch);
    this.logits = new Float32Array(batch * config.vocabSize);
    this.selection = new Int32Array(work.selection.size / F32);
    this.reads = new Uint32Array(work.reads.size / F32);
    this.indexReads = new Uint32Array(work.indexReads.size / F32);
  }

  static async create(gpu: GpuContext, config: ModelConfig, o: GpuDecoderOptions = {}): Promise<GpuDecoder> {
    assertValidModelConfig(config);
    const B = o.batch ?? 1;
    const cap = o.capacity ?? config.seqLen;
    if (!(Number.isInteger(B) && B >= 1)) throw new RangeError(`decoder batch must be an integer ≥ 1 (got ${B})`);
    if (!(Number.isInteger(cap) && cap >= 1 && cap <= config.seqLen))
      throw new RangeError(`decoder capacity must be an integer in [1, ${config.seqLen}] (got ${cap})`);
    const params = createLayoutArena(gpu, 'decode.params', paramLayout(config));
    const lanes = decodeDsaLanes(gpu);
    const work = createLayoutArena(gpu, 'decode.work', decodeWorkLayout(config, B, cap, lanes));
    const w = work.tensors;
    gpu.write(w.rope, usesRope(config) ? ropeTable(cap, config.dk, config.ropeTheta) : identityRopeTable(cap, config.dk));
    const dI = config.dsa?.indexDim;
    if (config.attention === 'dsa' && dI && w.dsa)
      gpu.write(w.dsa.rope, usesRope(config) ? ropeTable(cap, dI, config.ropeTheta) : identityRopeTable(cap, dI));
    // A window model selects nothing: its selection rows stay −1 (no kernel writes them).
    if (config.attention === 'window') gpu.write(w.selection, new Int32Array(w.selection.size / F32).fill(-1));
    const { dispatches, compress } = await buildDispatches(gpu, config, B, cap, params.tensors, w, lanes, o.nsaKernels);
    const bytes = readbackSlices(w).reduce((s, x) => s + x.size, 0);
    const staging = gpu.createBuffer({ label: 'decode.readback', size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const buffers = [...params.arena.buffers, ...work.arena.buffers];
    return new GpuDecoder(gpu, config, B, cap, params.tensors, w, buffers, dispatches, compress, staging);
  }

  /** Loads the weights (every tensor of the layout, checked first). */
  loadParams(values: ReadonlyMap<string, ArrayLike<number>>): void {
    const all = this.params.all;
    for (const { spec: s } of all) {
      const v = values.get(s.name);
      if (!v) throw new RangeError(`decoder weights: missing tensor ${s.name}`);
      if (v.length !== numel(s.shape))
        throw new RangeError(
          `decoder weights: tensor ${s.name} has ${v.length} values, expected ${numel(s.shape)} ([${s.shape.join(', ')}])`,
        );
    }
    for (const { spec, slice } of all) {
      const v = values.get(spec.name) as ArrayLike<number>;
      this.gpu.write(slice, v instanceof Float32Array ? v : Float32Array.from(v));
    }
  }

  /** Tokens fed so far per sequence (= the position of the next one). */
  get length(): number {
    return this.len;
  }

  /** Empties the caches (the next token is position 0). */
  reset(): void {
    this.len = 0;
  }

  /**
   * For benchmarks: moves to position `t` (the next step feeds position t) without feeding tokens
   * 0 … t − 1, which at large t takes far longer than the step being timed.
   *
   * With `fill`: every row of every K/V cache (each sequence, layer and KV set; the window ring
   * whole) is overwritten with values drawn from `fill`, then the compressed caches are rebuilt from
   * those rows by the decoder's own compression dispatches at each position p < t whose token
   * completes a block (the emission rule), in order, in one submit. The compressed cache is then
   * exactly what feeding tokens whose (rotated) K/V rows were those values would have left; the rows
   * themselves are random, not the projections of any tokens, so the step at t attends over
   * random keys — the same work as over real ones (logits and selections mean nothing).
   *
   * Without `fill` the caches are kept and t must be `length` or `length − 1`: stepping back over
   * the last token to time the same step again. That step wrote only row t of each cache (in the
   * window ring, row t mod w, whose old position t − w is outside position t's window) and the
   * compressed row of the block it completed; repeating it with the same token rewrites them.
   */
  async seek(t: number, fill?: () => number): Promise<void> {
    if (!(Number.isInteger(t) && t >= 0 && t < this.capacity))
      throw new RangeError(`decoder seek: position ${t} outside [0, ${this.capacity})`);
    if (!fill) {
      if (t !== this.len && t !== this.len - 1)
        throw new RangeError(`decoder seek: without fill only back one token (length ${this.len}, asked ${t})`);
      this.len = t;
      return;
    }
    const c = this.config;
    for (const layer of this.work.layers) {
      for (const kv of layer.kv) {
        for (const slice of [kv.k, kv.v]) this.gpu.write(slice, Float32Array.from({ length: slice.size / F32 }, fill));
      }
      for (const ring of layer.convRing ?? []) this.gpu.write(ring, Float32Array.from({ length: ring.size / F32 }, fill));
      if (layer.indexKeys) this.gpu.write(layer.indexKeys, Float32Array.from({ length: layer.indexKeys.size / F32 }, fill));
    }
    // NSA and MoBA keep a compressed cache (MoBA: the block means of K).
    const nsa = c.attention === 'nsa' || c.attention === 'moba' ? attentionNsaConfig(c) : undefined;
    const emitted = nsa ? Array.from({ length: numCmpBlocks(t, nsa) }, (_, k) => k * nsa.d + nsa.l - 1) : [];
    if (emitted.length && this.compress.length) {
      // Each block's position goes into the state word by a copy between passes, so one submit
      // runs every emission in order.
      const positions = this.gpu.createBuffer({
        label: 'decode.seek',
        size: F32 * emitted.length,
        usage: GPUBufferUsage.COPY_SRC,
        mappedAtCreation: true,
      });
      new Uint32Array(positions.getMappedRange()).set(emitted);
      positions.unmap();
      const st = this.work.state;
      const enc = this.gpu.device.createCommandEncoder({ label: 'decode.seek' });
      emitted.forEach((_, i) => {
        enc.copyBufferToBuffer(positions, F32 * i, st.buffer, st.offset, F32);
        const pass = enc.beginComputePass();
        GpuContext.encode(pass, this.compress);
        pass.end();
      });
      this.gpu.submit([enc.finish()]);
      await this.gpu.finish();
      positions.destroy();
    }
    this.len = t;
  }

  /**
   * Feeds one token per sequence at position `length`. With `read` the logits (and selections and
   * read counts) come back; without, the step is only submitted (the prompt's tokens but the last).
   */
  async step(tokens: ArrayLike<number>, read = true): Promise<GpuDecodeOutput | null> {
    const c = this.config;
    const t = this.len;
    if (t >= this.capacity) throw new RangeError(`decoder: context full (${this.capacity} tokens)`);
    if (tokens.length !== this.batch) throw new RangeError(`decoder: ${tokens.length} tokens for a batch of ${this.batch}`);
    for (let b = 0; b < this.batch; b++) {
      const id = tokens[b];
      if (!(Number.isInteger(id) && id >= 0 && id < c.vocabSize))
        throw new RangeError(`decoder: token ${id} (sequence ${b}) outside the vocabulary [0, ${c.vocabSize})`);
      this.tokenWords[b] = id;
    }
    this.stateWords[0] = t;
    this.gpu.write(this.work.state, this.stateWords);
    this.gpu.write(this.work.tokens, this.tokenWords);
    const enc = this.gpu.device.createCommandEncoder({ label: 'decode.step' });
    const pass = enc.beginComputePass();
    GpuContext.encode(pass, this.dispatches);
    pass.end();
    if (read) {
      let at = 0;
      for (const s of readbackSlices(this.work)) {
        enc.copyBufferToBuffer(s.buffer, s.offset, this.staging, at, s.size);
        at += s.size;
      }
    }
    this.gpu.submit([enc.finish()]);
    this.len++;
    if (!read) return null;
    await this.staging.mapAsync(GPUMapMode.READ);
    const data = this.staging.getMappedRange();
    const L = this.logits.byteLength;
    this.logits.set(new Float32Array(data, 0, this.logits.length));
    this.selection.set(new Int32Array(data, L, this.selection.length));
    this.reads.set(new Uint32Array(data, L + this.work.selection.size, this.reads.length));
    this.indexReads.set(new Uint32Array(data, L + this.work.selection.size + this.work.reads.size, this.indexReads.length));
    this.staging.unmap();
    return { t, logits: this.logits, selection: this.selection, reads: this.reads, indexReads: this.indexReads };
  }

  /**
   * For tests: one work tensor, picked from the table, as floats. The ones shared by the layers
   * (q, blockScores, …) hold what the last layer left.
   */
  readWork(pick: (work: DecodeWork) => BufferSlice): Promise<Float32Array> {
    return this.gpu.readF32(pick(this.work));
  }

  /** Releases the decoder's buffers. */
  destroy(): void {
    this.staging.destroy();
    for (const b of this.buffers) b.destroy();
  }
}

/** The KV sets of a layer: one (dense, shared K/V) or cmp, sel, win. */
function kvSets(c: ModelConfig): number {
  return c.attention === 'nsa' && c.nsa && !c.nsa.sharedKV ? 3 : 1;
}

/** Rows of KV set s's cache: the per-branch window keeps a ring of w rows. */
function cacheRows(c: ModelConfig, s: number, cap: number): number {
  return kvSets(c) === 3 && s === 2 && c.nsa ? Math.min(c.nsa.w, cap) : cap;
}

/** A K/V pair of tensors. */
export interface KvPair {
  k: BufferSlice;
  v: BufferSlice;
}

/** One layer's caches. */
export interface DecodeLayerCaches {
  /**
   * K/V caches per KV set (one: dense or shared K/V; else cmp, sel, win), rows [B, rows, G, dk|dv]
   * with K rotated; the per-branch window keeps a ring of w rows.
   */
  kv: KvPair[];
  /** NSA: the compressed K/V caches [B, Nmax, G, dk|dv] (the step that completes a block appends its row). */
  compressed?: KvPair;
  /** With a short convolution: per KV set, the ring of the last `taps` raw key projections [B, taps, G·dk]. */
  convRing?: BufferSlice[];
  /** DSA: the rotated indexer key of every position [B, cap, d_I]. */
  indexKeys?: BufferSlice;
}

/** DSA's per-token indexer tensors (shared by the layers). */
export interface DecodeDsaWork {
  /** RoPE cos/sin table of the indexer's width [cap, d_I/2, 2] (identity without positional encoding). */
  rope: BufferSlice;
  /** Indexer queries [B, H_I, d_I] (rotated in place), the new key [B, d_I] (rotated), head weights [B, H_I]. */
  qI: BufferSlice;
  kNew: BufferSlice;
  wI: BufferSlice;
  /** Index scores [B, cap] (row b: tokens 0 … t). */
  scores: BufferSlice;
  /** u32 [B, chunks]: indexer rows read per chunk of the scores kernel. */
  counts: BufferSlice;
}

/**
 * The decoder's work tensors as a typed table (caches, per-token scratch, state, what is read back).
 * The ones shared by the layers are overwritten layer by layer.
 */
export interface DecodeWork {
  /**
   * u32 [4 + nLayers·STATE_WORDS_PER_LAYER]: word 0 is the position being decoded, written before
   * each step; from word 4, per layer, the tables of its two projection groups (written once).
   */
  state: BufferSlice;
  /** i32 [B]: the step's token per sequence. */
  tokens: BufferSlice;
  /** RoPE cos/sin table [cap, dk/2, 2] (posEncoding 'none': cos 1, sin 0, which leaves every pair as it is, exactly). */
  rope: BufferSlice;
  /** Residual stream [B, C]. */
  x: BufferSlice;
  /** RMSNorm outputs [B, C]: before attention, before the MLP, after the last layer. */
  attnNormed: BufferSlice;
  mlpNormed: BufferSlice;
  finalNormed: BufferSlice;
  /** Reciprocal RMS [B] of the last norm (unused by decode, written by the norm kernel). */
  rstd: BufferSlice;
  /** Query [B, H, dk], rotated in place. */
  q: BufferSlice;
  /** The token's new K/V per KV set [B, G, dk|dv], before they are rotated into the caches. */
  kvNew: KvPair[];
  /** Attention output [B, H, dv] (NSA: the gated mix of the branches). */
  attn: BufferSlice;
  /** NSA: each branch's output [B, H, dv]. */
  branchOut: { cmp: BufferSlice; sel: BufferSlice; win: BufferSlice };
  /** NSA gate logits and gates [B, H, 3]. */
  gateLogits: BufferSlice;
  gates: BufferSlice;
  /** SwiGLU silu(normed·w1) · (normed·w3) [B, F] (the w1 w3 product group's combine writes it). */
  ffnH: BufferSlice;
  /** normed·w1 and normed·w3 [B, F]: used only where w1 and w3 lie in different buffers. */
  ffnA: BufferSlice;
  ffnB: BufferSlice;
  /** Next-token logits [B, V] (read back). */
  logits: BufferSlice;
  /**
   * Per (sequence, head) a row of cap floats: the selection's q·kc (GPUs: its split kernels), then its
   * p_cmp (the cmp branch's weights), then each branch's scores.
   */
  headScratch: BufferSlice;
  /** NSA selection-block scores [B, G, nBmax]. */
  blockScores: BufferSlice;
  /** The split attention's chunk partials [B, H, splits, dv + 3] (shared by the branches and layers). */
  attnPartials: BufferSlice;
  /** The split products' partial sums [splits, B, N] (shared by every product). */
  matvecPartials: BufferSlice;
  /** φ = mlp: the compression MLP's hidden row [B, G, Dh]. */
  cmpHidden: BufferSlice;
  /** Selected blocks int32 [nLayers, B, G, nSel] (read back). */
  selection: BufferSlice;
  /** Key rows read u32 [nLayers, B, G, 4] in READ_SLOTS order (read back). */
  reads: BufferSlice;
  /** Indexer key rows read u32 [nLayers, B] (read back; DSA only writes it). */
  indexReads: BufferSlice;
  /** DSA: the indexer's per-token tensors. */
  dsa?: DecodeDsaWork;
  layers: DecodeLayerCaches[];
}

/**
 * Key chunks of the split attention per branch (attendSplits of the branch's most keys): dense over
 * the capacity; NSA's compressed branch over Nmax blocks, the selected over n·l′ keys, the window
 * over w.
 */
export function attendBranchSplits(c: ModelConfig, B: number, cap: number): { dense: number; cmp: number; sel: number; win: number } {
  const H = c.nHeads;
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const mech = attentionNsaConfig(c);
  if (c.attention === 'window' && mech) return { dense: 1, cmp: 1, sel: 1, win: attendSplits(B, H, Math.min(cap, mech.w)) };
  if (c.attention === 'moba' && mech) return { dense: 1, cmp: 1, sel: attendSplits(B, H, Math.min(cap, mech.nSel * mech.lSel)), win: 1 };
  if (c.attention === 'dsa' && c.dsa) return { dense: 1, cmp: 1, sel: attendSplits(B, H, Math.min(cap, c.dsa.topK)), win: 1 };
  if (!nsa) return { dense: attendSplits(B, H, cap), cmp: 1, sel: 1, win: 1 };
  return {
    dense: 1,
    cmp: attendSplits(B, H, Math.max(1, numCmpBlocks(cap, nsa))),
    sel: attendSplits(B, H, Math.min(cap, nsa.nSel * nsa.lSel)),
    win: attendSplits(B, H, Math.min(cap, nsa.w)),
  };
}

/**
 * The outputs of a layer's two projection groups, each one matvec (part + combine) over one input:
 * from the attention's normed input q, each KV set's k and v, NSA's gate logits and DSA's indexer
 * qI, kI, wI; from the MLP's, w1 and w3.
 */
function projectionGroups(c: ModelConfig): { attn: number[]; mlp: number[] } {
  const { nHeads: H, nKvGroups: G, dk, dv, ffnHidden: Fh } = c;
  const ix = c.attention === 'dsa' ? c.dsa : undefined;
  return {
    attn: [
      H * dk,
      ...Array.from({ length: kvSets(c) }, () => [G * dk, G * dv]).flat(),
      ...(c.attention === 'nsa' ? [3 * H] : []),
      ...(ix ? [ix.indexHeads * ix.indexDim, ix.indexDim, ix.indexHeads] : []),
    ],
    mlp: [Fh, Fh],
  };
}

/** Words of the state tensor per layer: the tables of its two projection groups and of its grouped append. */
const STATE_WORDS_PER_LAYER = matvecGroupTableWords(8) + matvecGroupTableWords(2) + appendTableWords(3);

/** Floats of the matvec partials: the largest of a step's products and groups. */
function matvecPartialsFloats(c: ModelConfig, B: number): number {
  const { dim: C, nHeads: H, dv, ffnHidden: Fh, vocabSize: V } = c;
  const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);
  const g = projectionGroups(c);
  const grouped = [sum(g.attn), sum(g.mlp)].map((N) => matvecGroupPartialsLength(B, N, matvecSplits(C, N)));
  const single = (
    [
      [H * dv, C],
      [Fh, C],
      [C, V],
    ] as Array<[number, number]>
  ).map(([K, N]) => matvecPartialsLength(B, N, matvecSplits(K, N)));
  return Math.max(...grouped, ...single);
}

/** What a step reads back, in staging order: logits, selection, reads, indexer reads. */
const readbackSlices = (w: DecodeWork): BufferSlice[] => [w.logits, w.selection, w.reads, w.indexReads];

/**
 * The one layout of the decoder's work arena (caches, scratch, state) for B sequences of capacity
 * `cap`: every arena name and size, and the typed table over them. `lanes`: the DSA decode kernels'
 * (decodeDsaLanes; 1, the default, sizes the most chunk counts).
 */
export function decodeWorkLayout(c: ModelConfig, B: number, cap: number, lanes = 1): (place: PlaceTensor) => DecodeWork {
  const { dim: C, nHeads: H, nKvGroups: G, dk, dv, ffnHidden: Fh, vocabSize: V } = c;
  // NSA, or the NSA config of a window or MoBA model (docs/nsa-spec.md section 15).
  const nsa = attentionNsaConfig(c);
  const hasCompressed = c.attention === 'nsa' || c.attention === 'moba';
  const Nmax = nsa && hasCompressed ? Math.max(1, numCmpBlocks(cap, nsa)) : 1;
  const nBmax = nsa ? numSelBlocks(cap, nsa) : 1;
  const dsa = c.attention === 'dsa' ? c.dsa : undefined;
  const nSel = dsa?.topK ?? nsa?.nSel ?? 1;
  return (place) => {
    const f32 = (name: string, floats: number) => place(name, Math.max(1, floats));
    if (projectionGroups(c).attn.length > 8) throw new Error('decoder: more than 8 projections of the attention input');
    const state = f32('st', 4 + c.nLayers * STATE_WORDS_PER_LAYER);
    const tokens = f32('tokens', B);
    const rope = f32('rope', cap * dk);
    const x = f32('x', B * C);
    const attnNormed = f32('n1', B * C);
    const mlpNormed = f32('n2', B * C);
    const finalNormed = f32('fin', B * C);
    const rstd = f32('rstd', B);
    // The outputs of the attention input's projection group, one after another (bound as one span).
    const q = f32('q', B * H * dk);
    // Every set's new k, then every set's new v: the grouped append binds each run as one span.
    const kNew = Array.from({ length: kvSets(c) }, (_, s) => f32(`kNew${s}`, B * G * dk));
    const vNew = Array.from({ length: kvSets(c) }, (_, s) => f32(`vNew${s}`, B * G * dv));
    const kvNew = kNew.map((k, s) => ({ k, v: vNew[s] }));
    const gateLogits = f32('gateLogits', B * 3 * H);
    const dsaProj = dsa && {
      qI: f32('qI', B * dsa.indexHeads * dsa.indexDim),
      kNew: f32('kINew', B * dsa.indexDim),
      wI: f32('wI', B * dsa.indexHeads),
    };
    const attn = f32('attn', B * H * dv);
    const branchOut = { cmp: f32('oCmp', B * H * dv), sel: f32('oSel', B * H * dv), win: f32('oWin', B * H * dv) };
    const gates = f32('gates', B * 3 * H);
    const ffnH = f32('ffH', B * Fh);
    const ffnA = f32('ffA', B * Fh);
    const ffnB = f32('ffB', B * Fh);
    const logits = f32('logits', B * V);
    const headScratch = f32('scratch', B * H * cap);
    const blockScores = f32('scores', B * G * nBmax);
    const splits = attendBranchSplits(c, B, cap);
    const attnPartials = f32('attnPart', attendPartialsLength(B, H, Math.max(...Object.values(splits)), dv));
    const matvecPartials = f32('matvecPart', matvecPartialsFloats(c, B));
    const cmpHidden = f32('hidden', B * G * cmpMlpHidden(Math.max(dk, dv)));
    const selection = f32('sel', c.nLayers * B * G * nSel);
    const reads = f32('reads', c.nLayers * B * G * 4);
    const indexReads = f32('indexReads', c.nLayers * B);
    const dsaWork: DecodeDsaWork | undefined = dsa &&
      dsaProj && {
        rope: f32('ropeI', cap * dsa.indexDim),
        ...dsaProj,
        scores: f32('indexScores', B * cap),
        counts: f32('indexCounts', B * decodeIndexChunks(cap, lanes)),
      };
    const layers = Array.from({ length: c.nLayers }, (_, l): DecodeLayerCaches => {
      // The K caches of every set, then the V caches (one span each for the grouped append).
      const sets = Array.from({ length: kvSets(c) }, (_, s) => s);
      const ks = sets.map((s) => f32(`L${l}.K${s}`, B * cacheRows(c, s, cap) * G * dk));
      const vs = sets.map((s) => f32(`L${l}.V${s}`, B * cacheRows(c, s, cap) * G * dv));
      const kv = sets.map((s) => ({ k: ks[s], v: vs[s] }));
      const taps = shortConvTaps(c);
      const convRing = taps > 0 ? kv.map((_, s) => f32(`L${l}.convRing${s}`, B * taps * G * dk)) : undefined;
      // MoBA's block means are keys only: its value cache is never written or read (one float).
      const compressed = hasCompressed
        ? { k: f32(`L${l}.kc`, B * Nmax * G * dk), v: f32(`L${l}.vc`, c.attention === 'moba' ? 1 : B * Nmax * G * dv) }
        : undefined;
      const indexKeys = dsa ? f32(`L${l}.kI`, B * cap * dsa.indexDim) : undefined;
      return { kv, ...(compressed ? { compressed } : {}), ...(convRing ? { convRing } : {}), ...(indexKeys ? { indexKeys } : {}) };
    });
    return {
      state,
      tokens,
      rope,
      x,
      attnNormed,
      mlpNormed,
      finalNormed,
      rstd,
      q,
      kvNew,
      attn,
      branchOut,
      gateLogits,
      gates,
      ffnH,
      ffnA,
      ffnB,
      logits,
      headScratch,
      blockScores,
      attnPartials,
      matvecPartials,
      cmpHidden,
      selection,
      reads,
      indexReads,
      ...(dsaWork ? { dsa: dsaWork } : {}),
      layers,
    };
  };
}

/**
 * The decoder's work tensors by name and bytes, without a GPU: with the parameters (paramLayout),
 * what a decoder of that size allocates (each tensor must fit one buffer and binding).
 */
export function decodeWorkEntries(c: ModelConfig, B: number, cap: number): ArenaEntry[] {
  return layoutEntries(decodeWorkLayout(c, B, cap));
}

async function buildDispatches(
  gpu: GpuContext,
  c: ModelConfig,
  B: number,
  cap: number,
  p: ParamTensors,
  w: DecodeWork,
  lanes: 64 | 1,
  nsaKernels: NsaAttnVariant | undefined,
): Promise<{ dispatches: Dispatch[]; compress: Dispatch[] }> {
  const { dim: C, nHeads: H, nKvGroups: G, dk, dv, ffnHidden: Fh, vocabSize: V } = c;
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  // The block arithmetic of NSA, or of a window or MoBA model's NSA config (section 15).
  const cfg = attentionNsaConfig(c);
  // DSA: its selection is one of one-token blocks (lSel = 1, nSel = k) for the SEL attention.
  const dsa = c.attention === 'dsa' ? c.dsa : undefined;
  const st = w.state;
  const base: Partial<DecodeParams> = {
    B,
    H,
    G,
    hpg: H / G,
    dk,
    dv,
    cap,
    Nmax: cfg && c.attention !== 'window' ? Math.max(1, numCmpBlocks(cap, cfg)) : 1,
    nBmax: cfg ? numSelBlocks(cap, cfg) : 1,
    l: cfg?.l ?? 1,
    d: cfg?.d ?? 1,
    lSel: cfg?.lSel ?? 1,
    nSel: dsa?.topK ?? cfg?.nSel ?? 1,
    w: cfg?.w ?? 1,
    forceInit: cfg?.forceInit ? 1 : 0,
    forceLocal: cfg?.forceLocal ?? 0,
    scale: 1 / Math.sqrt(dk),
    HI: dsa?.indexHeads ?? 0,
    dI: dsa?.indexDim ?? 0,
    topK: dsa?.topK ?? 0,
    iscale: dsa ? indexScale(dsa) : 0,
  };
  const out: Array<Promise<Dispatch | Dispatch[]>> = [];
  const compress: Promise<Dispatch>[] = [];
  const mv = (x: BufferSlice, Wt: BufferSlice, o: BufferSlice, K: number, N: number, label: string, accumulate = false, transW = false) =>
    out.push(
      matvecDispatch(gpu, {
        st,
        x,
        W: Wt,
        out: o,
        rows: B,
        K,
        N,
        accumulate,
        transW,
        label,
        splits: matvecSplits(K, N),
        part: w.matvecPartials,
      }),
    );
  // One matvec for several products of the same input (a projection group); its table goes into
  // the state tensor at word `tab`.
  // A group binds its weights and its outputs as one span each: where an arena was split over
  // several buffers (an adapter with small limits), the members run as one group per run of
  // members in the same buffers, their tables one after another. A run's chunks are matvecSplits',
  // halved while its partials would not fit the scratch.
  const group = (x: BufferSlice, members: MatvecMember[], tab: number, label: string, gated?: BufferSlice) => {
    const runs: MatvecMember[][] = [];
    for (const m of members) {
      const last = runs[runs.length - 1]?.[0];
      if (last && last.W.buffer === m.W.buffer && last.out?.buffer === m.out?.buffer) runs[runs.length - 1].push(m);
      else runs.push([m]);
    }
    let at = tab;
    runs.forEach((run, i) => {
      const N = run.reduce((a, m) => a + m.N, 0);
      let splits = matvecSplits(C, N);
      while (splits > 1 && 4 * matvecGroupPartialsLength(B, N, splits) > w.matvecPartials.size) splits = Math.ceil(splits / 2);
      const name = runs.length > 1 ? `${label} (${i + 1} of ${runs.length})` : label;
      out.push(
        matvecGroupDispatch(gpu, { st, tab: at, x, rows: B, K: C, members: run, splits, part: w.matvecPartials, gated, label: name }),
      );
      at += matvecGroupTableWords(run.length);
    });
  };
  const sameBuffer = (slices: BufferSlice[]) => slices.every((x) => x.buffer === slices[0].buffer);
  out.push(embeddingForwardDispatch(gpu, { tokens: w.tokens, table: p.wte, out: w.x, N: B, C }));
  for (let l = 0; l < c.nLayers; l++) {
    const L: LayerParams = p.layers[l];
    const cache = w.layers[l];
    const at = `decode L${l}`;
    out.push(rmsnormForwardDispatch(gpu, { x: w.x, weight: L.attnNorm, out: w.attnNormed, rstd: w.rstd, rows: B, C, eps: c.normEps }));
    // q, every KV set's k and v, NSA's gate logits, DSA's indexer qI, kI, wI: one product group.
    const tab = 4 + l * STATE_WORDS_PER_LAYER;
    const proj: MatvecMember[] = [{ W: L.wq, out: w.q, N: H * dk }];
    L.kv.forEach((kv, s) => proj.push({ W: kv.wk, out: w.kvNew[s].k, N: G * dk }, { W: kv.wv, out: w.kvNew[s].v, N: G * dv }));
    if (nsa) {
      if (!L.gates) throw new Error(`decoder: layer ${l} has no gate weights`);
      proj.push({ W: L.gates.wg, out: w.gateLogits, N: 3 * H });
    }
    if (dsa) {
      const ix = L.indexer;
      const dw = w.dsa;
      if (!ix || !dw) throw new Error(`decoder: layer ${l} has no DSA indexer`);
      const { indexHeads: HI, indexDim: dI } = dsa;
      proj.push({ W: ix.wqI, out: dw.qI, N: HI * dI }, { W: ix.wkI, out: dw.kNew, N: dI }, { W: ix.wwI, out: dw.wI, N: HI });
    }
    group(w.attnNormed, proj, tab, `${at} q k v${nsa ? ' gates' : ''}${dsa ? ' index' : ''}`);
    out.push(
      decodeRowsDispatch(
        gpu,
        'ropeQ',
        st,
        decodeParams(base, { half: dk / 2, total: B * H * (dk / 2) }),
        { a: w.rope, b: w.q },
        `${at} rope q`,
      ),
    );
    // NSA's per-branch K/V sets are appended in one dispatch where each of its four spans (new
    // keys, new values, K caches, V caches) lies in one buffer.
    const fuseAppend =
      L.kv.length > 1 &&
      sameBuffer(w.kvNew.map((x) => x.k)) &&
      sameBuffer(w.kvNew.map((x) => x.v)) &&
      sameBuffer(cache.kv.map((x) => x.k)) &&
      sameBuffer(cache.kv.map((x) => x.v));
    L.kv.forEach((kv, s) => {
      const fresh = w.kvNew[s];
      const ring = cache.convRing?.[s];
      if (ring && kv.kConv) {
        const Pc = decodeParams(base, { K: shortConvTaps(c), D: G * dk, total: B * G * dk });
        out.push(decodeRowsDispatch(gpu, 'convK', st, Pc, { a: kv.kConv, b: fresh.k, c: ring }, `${at} conv k${s}`));
      }
      if (fuseAppend) return;
      const P = decodeParams(base, { rows: cacheRows(c, s, cap), total: B * G * (dk + dv) });
      const storage = { a: w.rope, b: fresh.k, c: fresh.v, d: cache.kv[s].k, e_: cache.kv[s].v };
      out.push(decodeRowsDispatch(gpu, 'appendKV', st, P, storage, `${at} append kv${s}`));
    });
    // NSA's per-branch K/V: the three sets' appends in one dispatch.
    if (fuseAppend) {
      const sets = L.kv.map((_, s) => ({
        k: w.kvNew[s].k,
        v: w.kvNew[s].v,
        kCache: cache.kv[s].k,
        vCache: cache.kv[s].v,
        rows: cacheRows(c, s, cap),
      }));
      const atab = tab + matvecGroupTableWords(8) + matvecGroupTableWords(2);
      out.push(appendKVGroupDispatch(gpu, st, atab, decodeParams(base, {}), w.rope, sets, `${at} append kv`));
    }
    const slot = l * B * G * (base.nSel as number);
    const rslot = l * B * G * 4;
    const splits = attendBranchSplits(c, B, cap);
    const attend = (branch: number, s: number | 'cmp', o: BufferSlice, label: string) => {
      const cmp = s === 'cmp';
      const n = [splits.cmp, splits.sel, splits.win, splits.dense][branch];
      const P = decodeParams(base, { branch, slot, rslot, splits: n, rows: cmp ? (base.Nmax as number) : cacheRows(c, s, cap) });
      const kv = cmp ? cache.compressed : cache.kv[s];
      if (!kv) throw new Error(`decoder: layer ${l} has no compressed cache`);
      out.push(
        decodeAttendDispatches(
          gpu,
          P,
          { st, q: w.q, k: kv.k, v: kv.v, out: o, scratch: w.headScratch, sel: w.selection, reads: w.reads, part: w.attnPartials },
          `${at} ${label}`,
        ),
      );
    };
    if (c.attention === 'window') attend(2, 0, w.attn, 'attend win');
    else if (dsa) {
      // DSA: the indexer's qI, kI (both rotated at t) and wI from the normed input, its key into the
      // cache, the scores of tokens 0 … t, the top-k; then the main attention over the selected tokens.
      const ix = L.indexer;
      const dw = w.dsa;
      const kI = cache.indexKeys;
      if (!ix || !dw || !kI) throw new Error(`decoder: layer ${l} has no DSA indexer`);
      const { indexHeads: HI, indexDim: dI } = dsa;
      for (const [x, heads, name] of [
        [dw.qI, HI, 'q'],
        [dw.kNew, 1, 'k'],
      ] as const) {
        const P = decodeParams(base, { half: dI / 2, total: B * heads * (dI / 2) });
        out.push(decodeRowsDispatch(gpu, 'ropeQ', st, P, { a: dw.rope, b: x }, `${at} rope index ${name}`));
      }
      const storage = {
        st,
        qI: dw.qI,
        wI: dw.wI,
        kNew: dw.kNew,
        kI,
        scores: dw.scores,
        cnt: dw.counts,
        sel: w.selection,
        ireads: w.indexReads,
      };
      out.push(decodeDsaDispatches(gpu, decodeParams(base, { slot, rslot: l * B }), storage, `${at} dsa`, lanes));
      attend(1, 0, w.attn, 'attend sel');
    } else if (c.attention === 'moba') {
      // MoBA: the block mean of K when this token completes a block, scores and top-k, the selected blocks.
      const compressed = cache.compressed;
      if (!compressed) throw new Error(`decoder: layer ${l} has no block-mean cache`);
      const P = decodeParams(base, { rows: cap, D: dk, total: B * G * dk });
      const mean = decodeRowsDispatch(gpu, 'compressAvg', st, P, { a: cache.kv[0].k, b: compressed.k }, `${at} block mean k`);
      compress.push(mean);
      out.push(mean);
      const selStorage = { st, q: w.q, kc: compressed.k, scratch: w.headScratch, scores: w.blockScores, sel: w.selection };
      out.push(decodeSelectDispatches(gpu, decodeParams(base, { slot }), selStorage, `${at} select`, nsaKernels));
      attend(1, 0, w.attn, 'attend sel');
    } else if (!nsa) attend(3, 0, w.attn, 'attend dense');
    else {
      const compressed = cache.compressed;
      if (!compressed) throw new Error(`decoder: layer ${l} has no compressed cache`);
      // Compression of the cmp K/V cache (set 0) when this token completes a block.
      const cmpRows = cacheRows(c, 0, cap);
      const compressFrom = compress.length;
      for (const [which, D, src, dst] of [
        ['k', dk, cache.kv[0].k, compressed.k],
        ['v', dv, cache.kv[0].v, compressed.v],
      ] as const) {
        if (nsa.phi === 'avg') {
          const P = decodeParams(base, { rows: cmpRows, D, total: B * G * D });
          compress.push(decodeRowsDispatch(gpu, 'compressAvg', st, P, { a: src, b: dst }, `${at} compress ${which}`));
        } else {
          const m = L.cmpMlp?.[which];
          if (!m) throw new Error(`decoder: layer ${l} has no compression MLP for ${which}`);
          const Dh = cmpMlpHidden(D);
          const Ph = decodeParams(base, { rows: cmpRows, D, Dh, total: B * G * Dh });
          compress.push(
            decodeRowsDispatch(
              gpu,
              'compressHidden',
              st,
              Ph,
              { a: src, b: m.pos, c: m.w1, d: m.b1, e_: w.cmpHidden },
              `${at} compress ${which} hidden`,
            ),
          );
          const Po = decodeParams(base, { D, Dh, total: B * G * D });
          compress.push(
            decodeRowsDispatch(gpu, 'compressOut', st, Po, { a: w.cmpHidden, b: m.w2, c: m.b2, d: dst }, `${at} compress ${which} out`),
          );
        }
      }
      out.push(...compress.slice(compressFrom));
      const Ps = decodeParams(base, { slot });
      const selStorage = { st, q: w.q, kc: compressed.k, scratch: w.headScratch, scores: w.blockScores, sel: w.selection };
      out.push(decodeSelectDispatches(gpu, Ps, selStorage, `${at} select`, nsaKernels));
      const sets = kvSets(c);
      attend(0, 'cmp', w.branchOut.cmp, 'attend cmp');
      attend(1, sets === 3 ? 1 : 0, w.branchOut.sel, 'attend sel');
      attend(2, sets === 3 ? 2 : 0, w.branchOut.win, 'attend win');
      const gates = L.gates;
      if (!gates) throw new Error(`decoder: layer ${l} has no gate weights`);
      out.push(gateForwardDispatch(gpu, { logits: w.gateLogits, bias: gates.bg, gates: w.gates, rows: B, H, ablation: nsa.gates }));
      out.push(
        combineForwardDispatch(gpu, {
          gates: w.gates,
          oCmp: w.branchOut.cmp,
          oSel: w.branchOut.sel,
          oWin: w.branchOut.win,
          out: w.attn,
          rows: B,
          H,
          dv,
        }),
      );
    }
    mv(w.attn, L.wo, w.x, H * dv, C, `${at} o`, true);
    const mlp = L.mlp;
    if (mlp) {
      out.push(rmsnormForwardDispatch(gpu, { x: w.x, weight: mlp.norm, out: w.mlpNormed, rstd: w.rstd, rows: B, C, eps: c.normEps }));
      // w1 and w3 in one product group whose combine applies the SwiGLU (two products and the
      // SwiGLU kernel where the two weights lie in different buffers).
      if (mlp.w1.buffer === mlp.w3.buffer)
        group(
          w.mlpNormed,
          [
            { W: mlp.w1, N: Fh },
            { W: mlp.w3, N: Fh },
          ],
          tab + matvecGroupTableWords(8),
          `${at} w1 w3 swiglu`,
          w.ffnH,
        );
      else {
        mv(w.mlpNormed, mlp.w1, w.ffnA, C, Fh, `${at} w1`);
        mv(w.mlpNormed, mlp.w3, w.ffnB, C, Fh, `${at} w3`);
        out.push(swigluForwardDispatch(gpu, { a: w.ffnA, b: w.ffnB, out: w.ffnH, n: B * Fh }));
      }
      mv(w.ffnH, mlp.w2, w.x, Fh, C, `${at} w2`, true);
    }
  }
  out.push(rmsnormForwardDispatch(gpu, { x: w.x, weight: p.finalNorm, out: w.finalNormed, rstd: w.rstd, rows: B, C, eps: c.normEps }));
  mv(w.finalNormed, p.wte, w.logits, C, V, 'decode lm head', false, true);
  return { dispatches: (await Promise.all(out)).flat(), compress: await Promise.all(compress) };
}
