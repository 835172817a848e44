// Token-by-token decode with a KV cache per branch (docs/nsa-spec.md "Decode"). Each step appends
// token t, emits compressed block k = (t+1−l)/d when (t+1−l) % d == 0, then processes t exactly as
// one prefill row — group-centric: each key row of a group is read once for all its heads, and
// those reads are counted per branch (property 7).
import { numCmpBlocks, numSelCandidates, visibleCmpBlocks } from '../../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../../definitions/nsa-config';
import { selectionRanges } from '../../definitions/nsa-ranges';
import { dot, softmaxInPlace } from './attention';
import { checkMlpWeights, type CmpMlpPair, compressBlockAvg, compressBlockMlp } from './compression';
import type { NsaBranchInputs } from './layer';
import { groupSumRow, selectionScoresRow, selectTopRow } from './selection';

export interface NsaDecodeDims {
  H: number;
  G: number;
  dk: number;
  dv: number;
  /** Most tokens the cache will hold. */
  capacity: number;
}

/** One token's inputs: q [H,dk], per branch k [G,dk] / v [G,dv], gates [H,3]. */
export type NsaDecodeToken = NsaBranchInputs;

/** Key rows (a K row with its V row) read by one group for one token. */
export interface BranchReads {
  cmp: number;
  sel: number;
  win: number;
}

export interface NsaDecodeStep {
  t: number;
  /** [H,dv] each. */
  o: Float64Array;
  oCmp: Float64Array;
  oSel: Float64Array;
  oWin: Float64Array;
  /** p_cmp [H, ncmp(t)]. */
  pCmp: Float64Array;
  /** Group scores P [G, nb(t)]. */
  scores: Float64Array;
  /** int32 [G,nSel], ascending, −1 padded. */
  selection: Int32Array;
  /** Per group. */
  reads: BranchReads[];
  /** Whether this step appended a compressed block. */
  emitted: boolean;
}

/**
 * Which attention the decoder runs (docs/nsa-spec.md section 15): NSA's three gated branches, the
 * window branch alone, or MoBA (block means of K only, scores, top-k, the selected branch alone).
 * A mechanism's unused branches are not computed and read no key; its output is its branch's.
 */
export type DecodeMechanism = 'nsa' | 'window' | 'moba';

export class NsaDecodeRef {
  private readonly kCmp: Float64Array;
  private readonly vCmp: Float64Array;
  private readonly kSel: Float64Array;
  private readonly vSel: Float64Array;
  private readonly kWin: Float64Array;
  private readonly vWin: Float64Array;
  private readonly kc: Float64Array;
  private readonly vc: Float64Array;
  private readonly hScratch: Float64Array;
  private len = 0;
  private nc = 0;

  constructor(
    readonly dims: NsaDecodeDims,
    readonly c: NsaConfig,
    readonly mlp?: CmpMlpPair,
    readonly mechanism: DecodeMechanism = 'nsa',
  ) {
    const { H, G, dk, dv, capacity } = dims;
    assertNsaConfig(c, { H, G, dk, dv, T: capacity });
    if (c.phi === 'mlp') {
      if (!mlp) throw new Error('NsaDecodeRef: phi = mlp needs MLP weights');
      checkMlpWeights(mlp.k, dk, c);
      checkMlpWeights(mlp.v, dv, c);
    }
    this.kCmp = new Float64Array(capacity * G * dk);
    this.vCmp = new Float64Array(capacity * G * dv);
    this.kSel = new Float64Array(capacity * G * dk);
    this.vSel = new Float64Array(capacity * G * dv);
    this.kWin = new Float64Array(capacity * G * dk);
    this.vWin = new Float64Array(capacity * G * dv);
    const maxN = numCmpBlocks(capacity, c);
    this.kc = new Float64Array(maxN * G * dk);
    this.vc = new Float64Array(maxN * G * dv);
    this.hScratch = new Float64Array(mlp ? Math.max(mlp.k.dHidden, mlp.v.dHidden) : 0);
  }

  /** Tokens in the cache. */
  get length(): number {
    return this.len;
  }

  /** Compressed blocks in the cache. */
  get numCompressed(): number {
    return this.nc;
  }

  step(tok: NsaDecodeToken): NsaDecodeStep {
    const { H, G, dk, dv, capacity } = this.dims;
    const c = this.c;
    const t = this.len;
    if (t >= capacity) throw new Error(`NsaDecodeRef: cache full (${capacity} tokens)`);
    this.kCmp.set(Array.from(tok.kCmp), t * G * dk);
    this.vCmp.set(Array.from(tok.vCmp), t * G * dv);
    this.kSel.set(Array.from(tok.kSel), t * G * dk);
    this.vSel.set(Array.from(tok.vSel), t * G * dv);
    this.kWin.set(Array.from(tok.kWin), t * G * dk);
    this.vWin.set(Array.from(tok.vWin), t * G * dv);
    this.len++;

    const mech = this.mechanism;
    let emitted = false;
    if (mech !== 'window' && t + 1 >= c.l && (t + 1 - c.l) % c.d === 0) {
      const k = (t + 1 - c.l) / c.d;
      if (k !== this.nc) throw new Error(`NsaDecodeRef: emitting block ${k} with ${this.nc} in cache`);
      for (let g = 0; g < G; g++) {
        if (c.phi === 'avg') {
          compressBlockAvg(this.kCmp, k, g, G, dk, c, this.kc, (k * G + g) * dk);
          // MoBA's block means are keys only (they rank blocks; no value is ever read).
          if (mech === 'nsa') compressBlockAvg(this.vCmp, k, g, G, dv, c, this.vc, (k * G + g) * dv);
        } else {
          const m = this.mlp as CmpMlpPair;
          compressBlockMlp(this.kCmp, k, g, G, m.k, c, this.kc, (k * G + g) * dk, this.hScratch, 0);
          compressBlockMlp(this.vCmp, k, g, G, m.v, c, this.vc, (k * G + g) * dv, this.hScratch, 0);
        }
      }
      this.nc++;
      emitted = true;
    }
    const n = this.nc;
    if (mech !== 'window' && n !== visibleCmpBlocks(t, c))
      throw new Error(`NsaDecodeRef: ${n} compressed blocks at t=${t}, expected ${visibleCmpBlocks(t, c)}`);

    const h = H / G;
    const nb = numSelCandidates(t, c);
    const oCmp = new Float64Array(H * dv);
    const oSel = new Float64Array(H * dv);
    const oWin = new Float64Array(H * dv);
    const pCmp = new Float64Array(H * n);
    const scores = new Float64Array(G * nb);
    const selection = new Int32Array(G * c.nSel);
    const reads: BranchReads[] = [];
    const pSlc = new Float64Array(h * nb);
    if (mech === 'window') selection.fill(-1);
    for (let g = 0; g < G; g++) {
      const r: BranchReads = { cmp: 0, sel: 0, win: 0 };
      const winKeys: number[] = [];
      for (let s = Math.max(0, t - c.w + 1); s <= t; s++) winKeys.push(s);
      if (mech === 'window') {
        r.win = this.attendGroup(tok.q, g, winKeys, this.kWin, this.vWin, oWin).reads;
        reads.push(r);
        continue;
      }
      const blocks: number[] = [];
      for (let k = 0; k < n; k++) blocks.push(k);
      // MoBA: the block probabilities only (no compressed output; the means are not counted as keys).
      const pc = this.attendGroup(tok.q, g, blocks, this.kc, this.vc, oCmp, mech === 'nsa');
      if (mech === 'nsa') r.cmp = pc.reads;
      pSlc.fill(0);
      for (let m = 0; m < h; m++) {
        pCmp.set(pc.p[m], (g * h + m) * n);
        selectionScoresRow(pc.p[m], 0, t, c, pSlc, m * nb);
      }
      groupSumRow(pSlc, 0, h, nb, scores, g * nb);
      selectTopRow(scores, g * nb, t, c, selection, g * c.nSel);

      const selKeys: number[] = [];
      for (const [a, b] of selectionRanges(selection.subarray(g * c.nSel, (g + 1) * c.nSel), t, c)) {
        for (let s = a; s < b; s++) selKeys.push(s);
      }
      r.sel = this.attendGroup(tok.q, g, selKeys, this.kSel, this.vSel, oSel).reads;
      if (mech === 'nsa') r.win = this.attendGroup(tok.q, g, winKeys, this.kWin, this.vWin, oWin).reads;
      reads.push(r);
    }
    if (mech !== 'nsa') {
      const o = Float64Array.from(mech === 'window' ? oWin : oSel);
      return { t, o, oCmp, oSel, oWin, pCmp, scores, selection, reads, emitted };
    }
    const o = new Float64Array(H * dv);
    for (let i = 0; i < H; i++) {
      const gt = tok.gates;
      for (let e = 0; e < dv; e++) {
        const x = i * dv + e;
        o[x] = gt[3 * i] * oCmp[x] + gt[3 * i + 1] * oSel[x] + gt[3 * i + 2] * oWin[x];
      }
    }
    return { t, o, oCmp, oSel, oWin, pCmp, scores, selection, reads, emitted };
  }

  /**
   * Attention of the h heads of group g over key rows `keys` of K [·,G,dk] / V [·,G,dv]: each key
   * row is fetched once (counted) and used by every head. Writes the heads' rows of out [H,dv].
   */
  private attendGroup(
    q: ArrayLike<number>,
    g: number,
    keys: number[],
    K: Float64Array,
    V: Float64Array,
    out: Float64Array,
    withValues = true,
  ): { p: Float64Array[]; reads: number } {
    const { H, G, dk, dv } = this.dims;
    const h = H / G;
    const scale = 1 / Math.sqrt(dk);
    const n = keys.length;
    const p: Float64Array[] = [];
    for (let m = 0; m < h; m++) p.push(new Float64Array(n));
    let reads = 0;
    for (let j = 0; j < n; j++) {
      const ko = (keys[j] * G + g) * dk;
      reads++;
      for (let m = 0; m < h; m++) p[m][j] = dot(q, (g * h + m) * dk, K, ko, dk) * scale;
    }
    for (let m = 0; m < h; m++) softmaxInPlace(p[m], n);
    for (let j = 0; withValues && j < n; j++) {
      const vo = (keys[j] * G + g) * dv;
      for (let m = 0; m < h; m++) {
        const oo = (g * h + m) * dv;
        for (let e = 0; e < dv; e++) out[oo + e] += p[m][j] * V[vo + e];
      }
    }
    return { p, reads };
  }
}
