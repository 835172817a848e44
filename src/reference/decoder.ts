// Float64 CPU incremental decoder of the whole model: one token per step, a KV cache per layer.
// Dense layers cache RoPE'd keys and values; NSA layers drive one NsaDecodeRef each (a cache per
// branch, the spec's compressed-block emission rule, per-branch read counters). Every per-row
// operation runs in the same order as the full-sequence reference (modelForwardRef in
// src/reference/model.ts), so decode = prefill (docs/nsa-spec.md property 5) holds to rounding — in
// practice bit for bit. Float64 throughout: this is the oracle the GPU path is checked against,
// and it is fast enough for the tiny and small presets. DSA layers drive one DsaDecodeRef each (the
// K/V and indexer-key caches, top-k per docs/dsa-spec.md section 3, the reads of section 7).
import { indexerParamNames } from '../definitions/dsa-params';
import { type Branch } from '../definitions/gates';
import { attentionNsaConfig } from '../definitions/mechanisms';
import { assertValidModelConfig, type ModelConfig, type ModelNsaConfig, shortConvTaps, usesRope } from '../definitions/model-config';
import { numCmpBlocks, visibleCmpBlocks } from '../definitions/nsa-blocks';
import type { NsaConfig } from '../definitions/nsa-config';
import { cmpMlpHidden } from '../definitions/nsa-config';
import { EMBEDDING, FINAL_NORM, layerParamNames, numel, paramSpecs } from '../definitions/params';
import { DsaDecodeRef } from './dsa/decode';
import type { Params64 } from './model';
import type { CmpMlpPair } from './nsa/compression';
import { type BranchReads, NsaDecodeRef } from './nsa/decode';
import { applyGateAblation, gateForwardRef } from './nsa/gates';
import { rmsnormForwardRef } from './rmsnorm';
import { swigluForwardRef } from './swiglu';

export type { BranchReads } from './nsa/decode';

/** What one NSA layer did for the token just decoded. */
export interface NsaLayerStep {
  layer: number;
  /** Selected blocks int32 [G, nSel], ascending, −1 padded (DSA: selected tokens [G, k], every group's row equal). */
  selection: Int32Array;
  /** Key rows read per group, per branch (DSA: its main K/V rows in `sel`). */
  reads: BranchReads[];
  /** DSA only: indexer key rows read for this token, once for the layer (docs/dsa-spec.md section 7). */
  indexKeysRead?: number;
  /** Whether this token completed a compressed block. */
  emitted: boolean;
  /** Gates [H,3] as used (after any ablation). */
  gates: Float64Array;
}

export interface DecodeStep {
  /** Position of the token just fed. */
  t: number;
  token: number;
  /** Next-token logits [vocabSize]. */
  logits: Float64Array;
  /** One entry per layer for NSA, window, MoBA and DSA models (window: selection all −1; no gates outside NSA); empty for dense. */
  nsa: NsaLayerStep[];
}

/** The paper's Table 4 count for query t of one group: ncmp(t) + |selected positions ≤ t| + min(w, t+1). */
export interface ReadsFormula {
  cmp: number;
  sel: number;
  win: number;
  total: number;
}

export function readsFormula(t: number, selectionRow: ArrayLike<number>, c: NsaConfig): ReadsFormula {
  const cmp = visibleCmpBlocks(t, c);
  let sel = 0;
  for (let m = 0; m < selectionRow.length; m++) {
    const j = selectionRow[m];
    if (j >= 0) sel += Math.min(c.lSel, t + 1 - j * c.lSel);
  }
  const win = Math.min(c.w, t + 1);
  return { cmp, sel, win, total: cmp + sel + win };
}

/** Checkpoint tensors (f32) → float64 parameters, checking every tensor of the layout and its size. */
export function paramsToF64(c: ModelConfig, values: ReadonlyMap<string, ArrayLike<number>>): Params64 {
  const out: Params64 = new Map();
  const problems: string[] = [];
  for (const s of paramSpecs(c)) {
    const v = values.get(s.name);
    if (!v) problems.push(`missing tensor ${s.name}`);
    else if (v.length !== numel(s.shape))
      problems.push(`tensor ${s.name} has ${v.length} values, expected ${numel(s.shape)} ([${s.shape.join(', ')}])`);
    else out.set(s.name, Float64Array.from(v));
  }
  if (problems.length) throw new Error(`weights do not match the model config:\n${problems.join('\n')}`);
  return out;
}

/** The layer's φ = mlp weights as NsaDecodeRef takes them (undefined for φ = avg). */
function cmpMlpParams(c: ModelConfig, P: (name: string) => Float64Array, l: number): CmpMlpPair | undefined {
  if (c.nsa?.phi !== 'mlp') return undefined;
  const n = layerParamNames(l).cmpMlp;
  const one = (which: 'k' | 'v', D: number) => {
    const m = n[which];
    return { dIn: D, dHidden: cmpMlpHidden(D), pos: P(m.pos), w1: P(m.w1), b1: P(m.b1), w2: P(m.w2), b2: P(m.b2) };
  };
  return { k: one('k', c.dk), v: one('v', c.dv) };
}

/** The parameter names of branch b's K/V projection (the one shared pair with sharedKV). */
function branchKVNames(nsa: ModelNsaConfig, l: number, b: Branch): KvNames {
  const w = layerParamNames(l);
  return nsa.sharedKV ? { wk: w.wk, wv: w.wv, kConv: w.kConv } : w.branchKV[b];
}

type KvNames = { wk: string; wv: string; kConv: string };

/** The key convolution at position t from the raw key rows 0 … t (shortConvRef's sum for one row): Σ_i w[·, K−1−i] ⊙ raw[t − i]. */
function convRow(raw: readonly Float64Array[], t: number, w: Float64Array, K: number, C: number): Float64Array {
  const y = new Float64Array(C);
  for (let i = 0; i < K && i <= t; i++) for (let c = 0; c < C; c++) y[c] += w[c * K + (K - 1 - i)] * raw[t - i][c];
  return y;
}

/** y[N] = x[K]·W[K,N]; per output the same ascending-k sum as matmulRef (bit-identical), k-outer for locality. */
function rowTimes(x: ArrayLike<number>, W: Float64Array, K: number, N: number): Float64Array {
  const y = new Float64Array(N);
  for (let k = 0; k < K; k++) {
    const xk = x[k];
    const o = k * N;
    for (let n = 0; n < N; n++) y[n] += xk * W[o + n];
  }
  return y;
}

/** y[N] = x[K]·Wᵀ with W stored [N,K] (the tied LM head). */
function rowTimesT(x: ArrayLike<number>, W: Float64Array, K: number, N: number): Float64Array {
  const y = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let s = 0;
    const o = n * K;
    for (let k = 0; k < K; k++) s += x[k] * W[o + k];
    y[n] = s;
  }
  return y;
}

/** RoPE of one row [heads, headDim] at position pos, in place; the angle formula of ropeRef. */
function ropeRowInPlace(x: Float64Array, heads: number, headDim: number, pos: number, theta: number): void {
  const half = headDim / 2;
  for (let j = 0; j < half; j++) {
    const a = pos * theta ** ((-2 * j) / headDim);
    const c = Math.cos(a);
    const s = Math.sin(a);
    for (let h = 0; h < heads; h++) {
      const base = h * headDim;
      const x0 = x[base + j];
      const x1 = x[base + j + half];
      x[base + j] = x0 * c - x1 * s;
      x[base + j + half] = x0 * s + x1 * c;
    }
  }
}

const addInPlace = (a: Float64Array, b: ArrayLike<number>): void => {
  for (let i = 0; i < a.length; i++) a[i] += b[i];
};

/** Dense causal GQA cache of one layer: RoPE'd K [cap,G,dk] and V [cap,G,dv]. */
class DenseLayerCache {
  private readonly K: Float64Array;
  private readonly V: Float64Array;

  constructor(
    private readonly c: ModelConfig,
    capacity: number,
  ) {
    this.K = new Float64Array(capacity * c.nKvGroups * c.dk);
    this.V = new Float64Array(capacity * c.nKvGroups * c.dv);
  }

  /** Appends (k, v) at t and attends q [H,dk] over positions 0..t, in attentionForwardRef's order. */
  step(t: number, q: Float64Array, k: Float64Array, v: Float64Array): Float64Array {
    const { nHeads: H, nKvGroups: G, dk, dv } = this.c;
    this.K.set(k, t * G * dk);
    this.V.set(v, t * G * dv);
    const out = new Float64Array(H * dv);
    const scale = 1 / Math.sqrt(dk);
    const sc = new Float64Array(t + 1);
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / (H / G));
      let m = -Infinity;
      for (let j = 0; j <= t; j++) {
        const ko = (j * G + g) * dk;
        let d = 0;
        for (let e = 0; e < dk; e++) d += q[h * dk + e] * this.K[ko + e];
        sc[j] = d * scale;
        m = Math.max(m, sc[j]);
      }
      let l = 0;
      for (let j = 0; j <= t; j++) l += Math.exp(sc[j] - m);
      for (let j = 0; j <= t; j++) {
        const p = Math.exp(sc[j] - m) / l;
        const vo = (j * G + g) * dv;
        for (let e = 0; e < dv; e++) out[h * dv + e] += p * this.V[vo + e];
      }
    }
    return out;
  }
}

export class ModelDecoder {
  private readonly p: Params64;
  private readonly dense: DenseLayerCache[] = [];
  private readonly nsa: NsaDecodeRef[] = [];
  private readonly dsa: DsaDecodeRef[] = [];
  private len = 0;
  /** With a short convolution: per convolution weight, the raw key rows fed so far. */
  private readonly rawKeys = new Map<string, Float64Array[]>();

  /** capacity: most tokens the caches hold (default and maximum: the context length). */
  constructor(
    readonly config: ModelConfig,
    params: ReadonlyMap<string, ArrayLike<number>>,
    readonly capacity: number = config.seqLen,
  ) {
    assertValidModelConfig(config);
    if (!(Number.isInteger(capacity) && capacity >= 1 && capacity <= config.seqLen))
      throw new Error(`decoder capacity must be an integer in [1, ${config.seqLen}] (got ${capacity})`);
    this.p = paramsToF64(config, params);
    const P = (n: string) => this.p.get(n) as Float64Array;
    for (let l = 0; l < config.nLayers; l++) {
      // NSA, window and MoBA layers all decode through NsaDecodeRef (docs/nsa-spec.md section 15).
      const cfg = attentionNsaConfig(config);
      if (config.attention === 'dsa' && config.dsa) {
        const dims = { H: config.nHeads, G: config.nKvGroups, dk: config.dk, dv: config.dv, capacity };
        this.dsa.push(new DsaDecodeRef(dims, config.dsa));
      } else if (cfg) {
        const dims = { H: config.nHeads, G: config.nKvGroups, dk: config.dk, dv: config.dv, capacity };
        const mech = config.attention === 'window' || config.attention === 'moba' ? config.attention : 'nsa';
        this.nsa.push(new NsaDecodeRef(dims, cfg, cmpMlpParams(config, P, l), mech));
      } else this.dense.push(new DenseLayerCache(config, capacity));
    }
  }

  /** Tokens fed so far (= the position of the next one). */
  get length(): number {
    return this.len;
  }

  /** Compressed blocks each NSA layer's cache holds after `length` tokens. */
  get numCompressed(): number {
    return this.config.nsa && this.config.attention === 'nsa' ? numCmpBlocks(this.len, this.config.nsa) : 0;
  }

  /** Feeds the token at position `length` and returns the logits for the next one. */
  step(token: number): DecodeStep {
    const c = this.config;
    const t = this.len;
    if (t >= this.capacity) throw new Error(`decoder: context full (${this.capacity} tokens)`);
    if (!(Number.isInteger(token) && token >= 0 && token < c.vocabSize))
      throw new Error(`decoder: token ${token} outside the vocabulary [0, ${c.vocabSize})`);
    const P = (n: string) => this.p.get(n) as Float64Array;
    const C = c.dim;
    const H = c.nHeads;
    const G = c.nKvGroups;
    const { dk, dv } = c;
    const x = P(EMBEDDING).slice(token * C, (token + 1) * C);
    const nsaSteps: NsaLayerStep[] = [];
    for (let l = 0; l < c.nLayers; l++) {
      const w = layerParamNames(l);
      const n1 = rmsnormForwardRef(x, P(w.attnNorm), 1, C, c.normEps).out;
      const q = rowTimes(n1, P(w.wq), C, H * dk);
      const rope = usesRope(c);
      if (rope) ropeRowInPlace(q, H, dk, t, c.ropeTheta);
      const taps = shortConvTaps(c);
      const kv = (names: KvNames) => {
        let k = rowTimes(n1, P(names.wk), C, G * dk);
        if (taps > 0) {
          const raw = this.rawKeys.get(names.kConv) ?? [];
          this.rawKeys.set(names.kConv, raw);
          raw[t] = k;
          k = convRow(raw, t, P(names.kConv), taps, G * dk);
        }
        if (rope) ropeRowInPlace(k, G, dk, t, c.ropeTheta);
        return { k, v: rowTimes(n1, P(names.wv), C, G * dv) };
      };
      let attn: Float64Array;
      const nsa = c.attention === 'nsa' ? c.nsa : undefined;
      if (nsa) {
        const cmp = kv(branchKVNames(nsa, l, 'cmp'));
        const sel = nsa.sharedKV ? cmp : kv(branchKVNames(nsa, l, 'sel'));
        const win = nsa.sharedKV ? cmp : kv(branchKVNames(nsa, l, 'win'));
        const gates = applyGateAblation(gateForwardRef(n1, P(w.wg), P(w.bg), 1, C, H), nsa.gates);
        const st = this.nsa[l].step({ q, kCmp: cmp.k, vCmp: cmp.v, kSel: sel.k, vSel: sel.v, kWin: win.k, vWin: win.v, gates });
        nsaSteps.push({ layer: l, selection: st.selection, reads: st.reads, emitted: st.emitted, gates });
        attn = st.o;
      } else if (c.attention === 'window' || c.attention === 'moba') {
        // One K/V pair feeds the mechanism's one branch; no gates.
        const d = kv({ wk: w.wk, wv: w.wv, kConv: w.kConv });
        const gates = new Float64Array(0);
        const st = this.nsa[l].step({ q, kCmp: d.k, vCmp: d.v, kSel: d.k, vSel: d.v, kWin: d.k, vWin: d.v, gates });
        nsaSteps.push({ layer: l, selection: st.selection, reads: st.reads, emitted: st.emitted, gates });
        attn = st.o;
      } else if (c.attention === 'dsa' && c.dsa) {
        // The indexer reads the normed input like every projection: qI, kI rotated at t, no key convolution.
        const { indexHeads: HI, indexDim: dI, topK } = c.dsa;
        const n = indexerParamNames(l);
        const qI = rowTimes(n1, P(n.wqI), C, HI * dI);
        const kI = rowTimes(n1, P(n.wkI), C, dI);
        if (rope) {
          ropeRowInPlace(qI, HI, dI, t, c.ropeTheta);
          ropeRowInPlace(kI, 1, dI, t, c.ropeTheta);
        }
        const d = kv({ wk: w.wk, wv: w.wv, kConv: w.kConv });
        const st = this.dsa[l].step({ q, k: d.k, v: d.v, qI, kI, wI: rowTimes(n1, P(n.wwI), C, HI) });
        const selection = new Int32Array(G * topK);
        for (let g = 0; g < G; g++) selection.set(st.selection, g * topK);
        const reads = st.keysRead.map((sel) => ({ cmp: 0, sel, win: 0 }));
        nsaSteps.push({ layer: l, selection, reads, emitted: false, gates: new Float64Array(0), indexKeysRead: st.indexKeysRead });
        attn = st.o;
      } else {
        const d = kv({ wk: w.wk, wv: w.wv, kConv: w.kConv });
        attn = this.dense[l].step(t, q, d.k, d.v);
      }
      addInPlace(x, rowTimes(attn, P(w.wo), H * dv, C));
      if (c.ffnHidden > 0) {
        const n2 = rmsnormForwardRef(x, P(w.mlpNorm), 1, C, c.normEps).out;
        const h = swigluForwardRef(rowTimes(n2, P(w.w1), C, c.ffnHidden), rowTimes(n2, P(w.w3), C, c.ffnHidden));
        addInPlace(x, rowTimes(h, P(w.w2), c.ffnHidden, C));
      }
    }
    const fin = rmsnormForwardRef(x, P(FINAL_NORM), 1, C, c.normEps).out;
    const logits = rowTimesT(fin, P(EMBEDDING), C, c.vocabSize);
    this.len++;
    return { t, token, logits, nsa: nsaSteps };
  }
}
