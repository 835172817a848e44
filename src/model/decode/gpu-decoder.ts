// Token-by-token decode on the GPU (llm.c's inference loop, with NSA's per-branch caches): B
// sequences in lockstep, one new token each per step. Per layer and branch a KV cache lives on the
// GPU — dense: K/V for every position; NSA: the compression, selection and window K/V (one shared
// pair with sharedKV; otherwise the window keeps a ring of w rows) and the compressed cache, which
// the step that completes a block appends to (the spec's emission rule). Every dispatch is built
// once; a step writes the position and the tokens, encodes one pass, submits once and (when asked)
// maps one preallocated staging buffer: nothing is allocated per token.
// The float64 oracle is ModelDecoder (src/reference/decoder.ts); tests/gpu/decode.test.ts checks
// this against it and against the training forward at every position.
import { type Arena, type BufferSlice, createArena } from '../../gpu/arena';
import { type Dispatch, GpuContext } from '../../gpu/context';
import {
  decodeAttendDispatch,
  type DecodeParams,
  decodeParams,
  decodeRowsDispatch,
  decodeSelectDispatch,
  matvecDispatch,
} from '../../kernels/decode';
import { embeddingForwardDispatch } from '../../kernels/embedding';
import { combineForwardDispatch, gateForwardDispatch } from '../../kernels/nsa-gates';
import { rmsnormForwardDispatch } from '../../kernels/rmsnorm';
import { ropeTable } from '../../kernels/rope';
import { swigluForwardDispatch } from '../../kernels/swiglu';
import { assertValidModelConfig, type ModelConfig } from '../../spec/model-config';
import { numCmpBlocks, numSelBlocks } from '../../spec/nsa-blocks';
import { cmpMlpHidden } from '../../spec/nsa-config';
import { numel, paramSpecs } from '../../spec/params';
import { type LayerParams, paramTable } from '../param-tensors';

/** Key rows read by one (layer, sequence, group) for the last token: per branch, and dense. */
export const READ_SLOTS = ['cmp', 'sel', 'win', 'dense'] as const;

export interface GpuDecodeOutput {
  /** Position of the tokens just fed. */
  t: number;
  /** Next-token logits [B, vocabSize] (valid until the next step). */
  logits: Float32Array;
  /** NSA: selected blocks int32 [nLayers, B, G, nSel], ascending, −1 padded (all −1 for dense). */
  selection: Int32Array;
  /** Key rows read, u32 [nLayers, B, G, 4] in READ_SLOTS order. */
  reads: Uint32Array;
}

export interface GpuDecoderOptions {
  /** Sequences decoded together (default 1). */
  batch?: number;
  /** Most positions the caches hold (default and maximum: the context length). */
  capacity?: number;
}

const F32 = 4;

export class GpuDecoder {
  private len = 0;
  private readonly stateWords = new Uint32Array(4);
  private readonly tokenWords: Int32Array;
  private readonly logits: Float32Array;
  private readonly selection: Int32Array;
  private readonly reads: Uint32Array;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    readonly batch: number,
    readonly capacity: number,
    private readonly params: Arena,
    private readonly work: Arena,
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
    this.selection = new Int32Array(this.work.get('sel').size / F32);
    this.reads = new Uint32Array(this.work.get('reads').size / F32);
  }

  static async create(gpu: GpuContext, config: ModelConfig, o: GpuDecoderOptions = {}): Promise<GpuDecoder> {
    assertValidModelConfig(config);
    const B = o.batch ?? 1;
    const cap = o.capacity ?? config.seqLen;
    if (!(Number.isInteger(B) && B >= 1)) throw new RangeError(`decoder batch must be an integer ≥ 1 (got ${B})`);
    if (!(Number.isInteger(cap) && cap >= 1 && cap <= config.seqLen))
      throw new RangeError(`decoder capacity must be an integer in [1, ${config.seqLen}] (got ${cap})`);
    const specs = paramSpecs(config);
    const params = createArena(
      gpu,
      'decode.params',
      specs.map((s) => ({ name: s.name, bytes: F32 * numel(s.shape) })),
    );
    const layout = decodeLayout(config, B, cap);
    const work = createArena(gpu, 'decode.work', layout.entries);
    gpu.write(work.get('rope'), ropeTable(cap, config.dk, config.ropeTheta));
    const { dispatches, compress } = await buildDispatches(gpu, config, B, cap, paramTable(config, params), work);
    const bytes = (['logits', 'sel', 'reads'] as const).reduce((s, n) => s + work.get(n).size, 0);
    const staging = gpu.createBuffer({ label: 'decode.readback', size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    return new GpuDecoder(gpu, config, B, cap, params, work, dispatches, compress, staging);
  }

  /** Loads the weights (every tensor of the layout, checked first). */
  loadParams(values: ReadonlyMap<string, ArrayLike<number>>): void {
    const specs = paramSpecs(this.config);
    for (const s of specs) {
      const v = values.get(s.name);
      if (!v) throw new RangeError(`decoder weights: missing tensor ${s.name}`);
      if (v.length !== numel(s.shape))
        throw new RangeError(
          `decoder weights: tensor ${s.name} has ${v.length} values, expected ${numel(s.shape)} ([${s.shape.join(', ')}])`,
        );
    }
    for (const s of specs) {
      const v = values.get(s.name) as ArrayLike<number>;
      this.gpu.write(this.params.get(s.name), v instanceof Float32Array ? v : Float32Array.from(v));
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
    for (let l = 0; l < c.nLayers; l++) {
      for (let s = 0; s < kvSets(c); s++) {
        for (const n of [`L${l}.K${s}`, `L${l}.V${s}`]) {
          const slice = this.work.get(n);
          this.gpu.write(slice, Float32Array.from({ length: slice.size / F32 }, fill));
        }
      }
    }
    const nsa = c.attention === 'nsa' ? c.nsa : undefined;
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
      const st = this.work.get('st');
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
    this.gpu.write(this.work.get('st'), this.stateWords);
    this.gpu.write(this.work.get('tokens'), this.tokenWords);
    const enc = this.gpu.device.createCommandEncoder({ label: 'decode.step' });
    const pass = enc.beginComputePass();
    GpuContext.encode(pass, this.dispatches);
    pass.end();
    if (read) {
      let at = 0;
      for (const n of ['logits', 'sel', 'reads'] as const) {
        const s = this.work.get(n);
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
    this.reads.set(new Uint32Array(data, L + this.work.get('sel').size, this.reads.length));
    this.staging.unmap();
    return { t, logits: this.logits, selection: this.selection, reads: this.reads };
  }

  /**
   * For tests: one work tensor (decodeLayout's names) as floats. The per-layer ones shared by the
   * layers (q, scores, …) hold what the last layer left.
   */
  readWork(name: string): Promise<Float32Array> {
    return this.gpu.readF32(this.work.get(name));
  }

  /** Releases the decoder's buffers. */
  destroy(): void {
    this.staging.destroy();
    for (const b of [...this.params.buffers, ...this.work.buffers]) b.destroy();
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

/**
 * The decoder's work tensors (caches, scratch, state) for B sequences of capacity `cap`, by name and
 * bytes, without a GPU: with paramSpecs, what a decoder of that size allocates (each tensor must fit
 * one buffer and binding).
 */
export function decodeLayout(c: ModelConfig, B: number, cap: number): { entries: { name: string; bytes: number }[] } {
  const { dim: C, nHeads: H, nKvGroups: G, dk, dv, ffnHidden: Fh, vocabSize: V } = c;
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const Nmax = nsa ? Math.max(1, numCmpBlocks(cap, nsa)) : 1;
  const nBmax = nsa ? numSelBlocks(cap, nsa) : 1;
  const nSel = nsa?.nSel ?? 1;
  const e: { name: string; bytes: number }[] = [];
  const add = (name: string, floats: number) => e.push({ name, bytes: F32 * Math.max(1, floats) });
  add('st', 4);
  add('tokens', B);
  add('rope', cap * dk);
  for (const n of ['x', 'n1', 'n2', 'fin']) add(n, B * C);
  add('rstd', B);
  add('q', B * H * dk);
  for (let s = 0; s < kvSets(c); s++) {
    add(`kNew${s}`, B * G * dk);
    add(`vNew${s}`, B * G * dv);
  }
  for (const n of ['attn', 'oCmp', 'oSel', 'oWin']) add(n, B * H * dv);
  add('gateLogits', B * 3 * H);
  add('gates', B * 3 * H);
  for (const n of ['ffA', 'ffB', 'ffH']) add(n, B * Fh);
  add('logits', B * V);
  add('scratch', B * H * cap); // per head: the selection's p_cmp (the cmp branch's weights), then each branch's scores
  add('scores', B * G * nBmax);
  add('hidden', B * G * cmpMlpHidden(Math.max(dk, dv)));
  add('sel', c.nLayers * B * G * nSel);
  add('reads', c.nLayers * B * G * 4);
  for (let l = 0; l < c.nLayers; l++) {
    for (let s = 0; s < kvSets(c); s++) {
      const rows = cacheRows(c, s, cap);
      add(`L${l}.K${s}`, B * rows * G * dk);
      add(`L${l}.V${s}`, B * rows * G * dv);
    }
    if (nsa) {
      add(`L${l}.kc`, B * Nmax * G * dk);
      add(`L${l}.vc`, B * Nmax * G * dv);
    }
  }
  return { entries: e };
}

async function buildDispatches(
  gpu: GpuContext,
  c: ModelConfig,
  B: number,
  cap: number,
  p: ReturnType<typeof paramTable>,
  work: Arena,
): Promise<{ dispatches: Dispatch[]; compress: Dispatch[] }> {
  const W = (n: string): BufferSlice => work.get(n);
  const { dim: C, nHeads: H, nKvGroups: G, dk, dv, ffnHidden: Fh, vocabSize: V } = c;
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const st = W('st');
  const base: Partial<DecodeParams> = {
    B,
    H,
    G,
    hpg: H / G,
    dk,
    dv,
    cap,
    Nmax: nsa ? Math.max(1, numCmpBlocks(cap, nsa)) : 1,
    nBmax: nsa ? numSelBlocks(cap, nsa) : 1,
    l: nsa?.l ?? 1,
    d: nsa?.d ?? 1,
    lSel: nsa?.lSel ?? 1,
    nSel: nsa?.nSel ?? 1,
    w: nsa?.w ?? 1,
    forceInit: nsa?.forceInit ? 1 : 0,
    forceLocal: nsa?.forceLocal ?? 0,
    scale: 1 / Math.sqrt(dk),
  };
  const out: Promise<Dispatch>[] = [];
  const compress: Promise<Dispatch>[] = [];
  const mv = (x: BufferSlice, Wt: BufferSlice, o: BufferSlice, K: number, N: number, label: string, accumulate = false, transW = false) =>
    out.push(matvecDispatch(gpu, { st, x, W: Wt, out: o, rows: B, K, N, accumulate, transW, label }));
  out.push(embeddingForwardDispatch(gpu, { tokens: W('tokens'), table: p.wte, out: W('x'), N: B, C }));
  for (let l = 0; l < c.nLayers; l++) {
    const L: LayerParams = p.layers[l];
    const at = `decode L${l}`;
    out.push(rmsnormForwardDispatch(gpu, { x: W('x'), weight: L.attnNorm, out: W('n1'), rstd: W('rstd'), rows: B, C, eps: c.normEps }));
    mv(W('n1'), L.wq, W('q'), C, H * dk, `${at} q`);
    out.push(
      decodeRowsDispatch(
        gpu,
        'ropeQ',
        st,
        decodeParams(base, { half: dk / 2, total: B * H * (dk / 2) }),
        { a: W('rope'), b: W('q') },
        `${at} rope q`,
      ),
    );
    L.kv.forEach((kv, s) => {
      mv(W('n1'), kv.wk, W(`kNew${s}`), C, G * dk, `${at} k${s}`);
      mv(W('n1'), kv.wv, W(`vNew${s}`), C, G * dv, `${at} v${s}`);
      const P = decodeParams(base, { rows: cacheRows(c, s, cap), total: B * G * (dk + dv) });
      const storage = { a: W('rope'), b: W(`kNew${s}`), c: W(`vNew${s}`), d: W(`L${l}.K${s}`), e_: W(`L${l}.V${s}`) };
      out.push(decodeRowsDispatch(gpu, 'appendKV', st, P, storage, `${at} append kv${s}`));
    });
    const slot = l * B * G * (nsa?.nSel ?? 1);
    const rslot = l * B * G * 4;
    const attend = (branch: number, s: number | 'cmp', o: BufferSlice, label: string) => {
      const cmp = s === 'cmp';
      const P = decodeParams(base, { branch, slot, rslot, rows: cmp ? (base.Nmax as number) : cacheRows(c, s, cap) });
      const k = cmp ? W(`L${l}.kc`) : W(`L${l}.K${s}`);
      const v = cmp ? W(`L${l}.vc`) : W(`L${l}.V${s}`);
      out.push(
        decodeAttendDispatch(
          gpu,
          P,
          { st, q: W('q'), k, v, out: o, scratch: W('scratch'), sel: W('sel'), reads: W('reads') },
          `${at} ${label}`,
        ),
      );
    };
    if (!nsa) attend(3, 0, W('attn'), 'attend dense');
    else {
      // Compression of the cmp K/V cache (set 0) when this token completes a block.
      const cmpRows = cacheRows(c, 0, cap);
      const compressFrom = compress.length;
      for (const [which, D, src, dst] of [
        ['k', dk, W(`L${l}.K0`), W(`L${l}.kc`)],
        ['v', dv, W(`L${l}.V0`), W(`L${l}.vc`)],
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
              { a: src, b: m.pos, c: m.w1, d: m.b1, e_: W('hidden') },
              `${at} compress ${which} hidden`,
            ),
          );
          const Po = decodeParams(base, { D, Dh, total: B * G * D });
          compress.push(
            decodeRowsDispatch(gpu, 'compressOut', st, Po, { a: W('hidden'), b: m.w2, c: m.b2, d: dst }, `${at} compress ${which} out`),
          );
        }
      }
      out.push(...compress.slice(compressFrom));
      const Ps = decodeParams(base, { slot });
      const selStorage = { st, q: W('q'), kc: W(`L${l}.kc`), scratch: W('scratch'), scores: W('scores'), sel: W('sel') };
      out.push(decodeSelectDispatch(gpu, Ps, selStorage, `${at} select`));
      const sets = kvSets(c);
      attend(0, 'cmp', W('oCmp'), 'attend cmp');
      attend(1, sets === 3 ? 1 : 0, W('oSel'), 'attend sel');
      attend(2, sets === 3 ? 2 : 0, W('oWin'), 'attend win');
      const gates = L.gates;
      if (!gates) throw new Error(`decoder: layer ${l} has no gate weights`);
      mv(W('n1'), gates.wg, W('gateLogits'), C, 3 * H, `${at} gate logits`);
      out.push(gateForwardDispatch(gpu, { logits: W('gateLogits'), bias: gates.bg, gates: W('gates'), rows: B, H, ablation: nsa.gates }));
      out.push(
        combineForwardDispatch(gpu, {
          gates: W('gates'),
          oCmp: W('oCmp'),
          oSel: W('oSel'),
          oWin: W('oWin'),
          out: W('attn'),
          rows: B,
          H,
          dv,
        }),
      );
    }
    mv(W('attn'), L.wo, W('x'), H * dv, C, `${at} o`, true);
    out.push(rmsnormForwardDispatch(gpu, { x: W('x'), weight: L.mlpNorm, out: W('n2'), rstd: W('rstd'), rows: B, C, eps: c.normEps }));
    mv(W('n2'), L.w1, W('ffA'), C, Fh, `${at} w1`);
    mv(W('n2'), L.w3, W('ffB'), C, Fh, `${at} w3`);
    out.push(swigluForwardDispatch(gpu, { a: W('ffA'), b: W('ffB'), out: W('ffH'), n: B * Fh }));
    mv(W('ffH'), L.w2, W('x'), Fh, C, `${at} w2`, true);
  }
  out.push(rmsnormForwardDispatch(gpu, { x: W('x'), weight: p.finalNorm, out: W('fin'), rstd: W('rstd'), rows: B, C, eps: c.normEps }));
  mv(W('fin'), p.wte, W('logits'), C, V, 'decode lm head', false, true);
  return { dispatches: await Promise.all(out), compress: await Promise.all(compress) };
}
