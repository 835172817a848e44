// Float64 twin of the whole model (dense, NSA, window, MoBA or DSA attention): forward, loss and every parameter gradient, composed
// from the per-kernel references in the same order as src/model/plan.ts. The one-step GPU test
// and finite-difference checks of the full model compare against this.
import type { DsaPhase } from '../definitions/dsa-config';
import { dsaPhaseAt, indexerParamNames } from '../definitions/dsa-params';
import { type ModelConfig, shortConvTaps, usesRope } from '../definitions/model-config';
import { cmpMlpHidden } from '../definitions/nsa-config';
import { EMBEDDING, FINAL_NORM, layerParamNames, numel, paramSpecs } from '../definitions/params';
import { scoredTargets } from '../definitions/targets';
import { attentionBackwardRef, attentionForwardRef } from './attention';
import { crossEntropyRef } from './crossentropy';
import { dsaAttentionBackwardRef } from './dsa/attention';
import { type DsaLayerAttention, dsaLayerAttentionRef } from './dsa/layer';
import { embeddingBackwardRef, embeddingForwardRef } from './embedding';
import { matmulRef } from './matmul';
import { mechanismBackward64, mechanismForward64, type MechanismSeqForward } from './mechanisms';
import type { CmpMlpPair } from './nsa/compression';
import { applyGateAblation, gateAblationBackward, gateBackwardRef, gateForwardRef } from './nsa/gates';
import { nsaBackwardRef, type NsaForward, nsaForwardRef, type NsaInputs } from './nsa/layer';
import { rmsnormBackwardRef, rmsnormForwardRef } from './rmsnorm';
import { ropeRef } from './rope';
import { shortConvBackwardRef, shortConvRef } from './short-conv';
import { swigluBackwardRef, swigluForwardRef } from './swiglu';

export type Params64 = Map<string, Float64Array>;

const add = (a: Float64Array, b: ArrayLike<number>): Float64Array => {
  const o = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) o[i] = a[i] + b[i];
  return o;
};
const addInto = (a: Float64Array, b: ArrayLike<number>): void => {
  for (let i = 0; i < a.length; i++) a[i] += b[i];
};

/** The sizes the passes below share: B sequences of T tokens make N rows of width C. */
const refDims = (c: ModelConfig, B: number) => ({ T: c.seqLen, N: B * c.seqLen, C: c.dim, H: c.nHeads, G: c.nKvGroups, F: c.ffnHidden });

/** Looks parameters up by name; a missing one is an error naming it. */
const paramGetter =
  (p: Params64) =>
  (n: string): Float64Array => {
    const v = p.get(n);
    if (!v) throw new Error(`missing parameter ${n}`);
    return v;
  };

interface LayerCache {
  x: Float64Array;
  attnNormed: Float64Array;
  attnRstd: Float64Array;
  attnCache: AttentionCache64;
  attn: Float64Array;
  xMid: Float64Array;
  /** The MLP's intermediates; absent in attention-only layers. */
  mlp?: { normed: Float64Array; rstd: Float64Array; a: Float64Array; b: Float64Array; h: Float64Array };
}

export interface ModelForward64 {
  /** Mean cross-entropy over the B·T positions. */
  loss: number;
  losses: Float64Array;
  logits: Float64Array;
  layers: LayerCache[];
  xFinal: Float64Array;
  finalNormed: Float64Array;
  finalRstd: Float64Array;
  /** DSA: the phase the forward ran in, and Σ over layers of each layer's indexer loss L_I. */
  dsa?: { phase: DsaPhase; indexLoss: number };
}

export interface ModelForwardOptions {
  /** NSA, MoBA and DSA: use these selections (per layer, int32 [B,T,G,nSel or topK]) instead of computing them. */
  selections?: readonly Int32Array[];
  /** DSA: the training phase (docs/dsa-spec.md section 5); default that of step 0. */
  dsaPhase?: DsaPhase;
}

export function modelForwardRef(
  c: ModelConfig,
  p: Params64,
  tokens: ArrayLike<number>,
  targets: ArrayLike<number>,
  B: number,
  opts: ModelForwardOptions = {},
): ModelForward64 {
  const { N, C, H, F } = refDims(c, B);
  const P = paramGetter(p);
  let x = embeddingForwardRef(tokens, P(EMBEDDING), N, C);
  const layers: LayerCache[] = [];
  const dsaPhase = c.attention === 'dsa' && c.dsa ? (opts.dsaPhase ?? dsaPhaseAt(0, c.dsa)) : undefined;
  let indexLoss = 0;
  for (let l = 0; l < c.nLayers; l++) {
    const w = layerParamNames(l);
    const n1 = rmsnormForwardRef(x, P(w.attnNorm), N, C, c.normEps);
    const at = attentionForward64(c, P, l, n1.out, B, opts.selections?.[l], dsaPhase);
    indexLoss += at.cache.dsa?.indexLoss ?? 0;
    const xMid = add(x, matmulRef(at.out, P(w.wo), N, C, H * c.dv));
    const layer: LayerCache = { x, attnNormed: n1.out, attnRstd: n1.rstd, attnCache: at.cache, attn: at.out, xMid };
    x = xMid;
    if (c.ffnHidden > 0) {
      const n2 = rmsnormForwardRef(xMid, P(w.mlpNorm), N, C, c.normEps);
      const a = matmulRef(n2.out, P(w.w1), N, F, C);
      const b = matmulRef(n2.out, P(w.w3), N, F, C);
      const h = swigluForwardRef(a, b);
      x = add(xMid, matmulRef(h, P(w.w2), N, C, F));
      layer.mlp = { normed: n2.out, rstd: n2.rstd, a, b, h };
    }
    layers.push(layer);
  }
  const fin = rmsnormForwardRef(x, P(FINAL_NORM), N, C, c.normEps);
  const logits = matmulRef(fin.out, P(EMBEDDING), N, c.vocabSize, C, { transB: true });
  const ce = crossEntropyRef(logits, targets, N, c.vocabSize);
  let loss = 0;
  for (let i = 0; i < N; i++) loss += ce.losses[i];
  return {
    loss: loss / scoredTargets(targets),
    losses: ce.losses,
    logits,
    layers,
    xFinal: x,
    finalNormed: fin.out,
    finalRstd: fin.rstd,
    ...(dsaPhase ? { dsa: { phase: dsaPhase, indexLoss } } : {}),
  };
}

/**
 * Gradients of the mean loss (over the scored targets: all but IGNORE_TARGET) with respect to every
 * parameter. DSA: the indexers' parameters get ∂L_I/∂W (their own loss, docs/dsa-spec.md section 5);
 * in the warm-up the main model is frozen, so every other gradient is 0.
 */
export function modelBackwardRef(
  c: ModelConfig,
  p: Params64,
  tokens: ArrayLike<number>,
  targets: ArrayLike<number>,
  B: number,
  fwd: ModelForward64,
): Params64 {
  const { N, C, H, F } = refDims(c, B);
  const V = c.vocabSize;
  const P = paramGetter(p);
  const grads: Params64 = new Map(paramSpecs(c).map((s) => [s.name, new Float64Array(numel(s.shape))]));
  const Gr = (n: string) => grads.get(n)!;
  fwd.layers.forEach((L, l) => {
    const d = L.attnCache.dsa;
    if (!d) return;
    const n = indexerParamNames(l);
    addInto(Gr(n.wqI), d.grads.dwqI);
    addInto(Gr(n.wkI), d.grads.dwkI);
    addInto(Gr(n.wwI), d.grads.dwwI);
  });
  if (fwd.dsa?.phase === 'warmup') return grads;
  const dlogits = crossEntropyRef(fwd.logits, targets, N, V).dlogits;
  const scored = scoredTargets(targets);
  for (let i = 0; i < dlogits.length; i++) dlogits[i] /= scored;
  const dFinalNormed = matmulRef(dlogits, P(EMBEDDING), N, C, V);
  addInto(Gr(EMBEDDING), matmulRef(dlogits, fwd.finalNormed, V, C, N, { transA: true }));
  const fb = rmsnormBackwardRef(dFinalNormed, fwd.xFinal, P(FINAL_NORM), fwd.finalRstd, N, C);
  addInto(Gr(FINAL_NORM), fb.dweight);
  const dx = fb.dx;
  for (let l = c.nLayers - 1; l >= 0; l--) {
    const w = layerParamNames(l);
    const L = fwd.layers[l];
    // MLP (attention-only layers have none: dx is already d x_mid)
    const mlp = L.mlp;
    if (mlp) {
      const dh = matmulRef(dx, P(w.w2), N, F, C, { transB: true });
      addInto(Gr(w.w2), matmulRef(mlp.h, dx, F, C, N, { transA: true }));
      const sw = swigluBackwardRef(dh, mlp.a, mlp.b);
      const dn2 = matmulRef(sw.da, P(w.w1), N, C, F, { transB: true });
      addInto(dn2, matmulRef(sw.db, P(w.w3), N, C, F, { transB: true }));
      addInto(Gr(w.w1), matmulRef(mlp.normed, sw.da, C, F, N, { transA: true }));
      addInto(Gr(w.w3), matmulRef(mlp.normed, sw.db, C, F, N, { transA: true }));
      const r2 = rmsnormBackwardRef(dn2, L.xMid, P(w.mlpNorm), mlp.rstd, N, C);
      addInto(Gr(w.mlpNorm), r2.dweight);
      addInto(dx, r2.dx);
    }
    // Attention
    const dattn = matmulRef(dx, P(w.wo), N, H * c.dv, C, { transB: true });
    addInto(Gr(w.wo), matmulRef(L.attn, dx, H * c.dv, C, N, { transA: true }));
    const dn1 = attentionBackward64(c, P, Gr, l, L.attnNormed, L.attnCache, dattn, B);
    const r1 = rmsnormBackwardRef(dn1, L.x, P(w.attnNorm), L.attnRstd, N, C);
    addInto(Gr(w.attnNorm), r1.dweight);
    addInto(dx, r1.dx);
  }
  addInto(Gr(EMBEDDING), embeddingBackwardRef(tokens, dx, V, C));
  return grads;
}

/** What an attention layer keeps for its backward: dense q/k/v, or NSA inputs and forwards. */
export interface AttentionCache64 {
  q: Float64Array; // after RoPE
  /** K/V projections after RoPE on K, in kvNames order (dense: one pair; NSA: one per branch or shared). */
  kv: Array<{ k: Float64Array; v: Float64Array }>;
  /** With a short convolution: each pair's K projection before it. */
  kRaw?: Float64Array[];
  /** NSA only: gate values before the ablation, and each sequence's inputs and forward. */
  gatesRaw?: Float64Array;
  nsa?: Array<{ inp: NsaInputs; fwd: NsaForward }>;
  /** Window and MoBA only: each sequence's forward (src/reference/mechanisms.ts). */
  mech?: MechanismSeqForward[];
  /** DSA only: the layer's indexer, selection, main attention and indexer loss (src/reference/dsa/layer.ts). */
  dsa?: DsaLayerAttention;
}

/** Each K/V pair's weight names [wk, wv, key convolution], in kvNames order. */
function kvWeightNames(c: ModelConfig, l: number): Array<[string, string, string]> {
  const w = layerParamNames(l);
  return c.attention === 'nsa' && c.nsa && !c.nsa.sharedKV
    ? (['cmp', 'sel', 'win'] as const).map((b) => [w.branchKV[b].wk, w.branchKV[b].wv, w.branchKV[b].kConv])
    : [[w.wk, w.wv, w.kConv]];
}

/** RoPE (or its inverse) when the model uses it; else x as it is. */
function rope64(c: ModelConfig, x: Float64Array, N: number, T: number, heads: number, inverse: boolean): Float64Array {
  return usesRope(c) ? ropeRef(x, N, T, heads, c.dk, c.ropeTheta, inverse) : x;
}

/** Rows [b·T, (b+1)·T) of a [B·T, width] tensor. */
const seq = (x: Float64Array, b: number, T: number, width: number) => x.subarray(b * T * width, (b + 1) * T * width);

function cmpMlp64(P: (n: string) => Float64Array, l: number, c: ModelConfig): CmpMlpPair {
  const m = layerParamNames(l).cmpMlp;
  const one = (which: 'k' | 'v', D: number) => ({
    dIn: D,
    dHidden: cmpMlpHidden(D),
    pos: P(m[which].pos),
    w1: P(m[which].w1),
    b1: P(m[which].b1),
    w2: P(m[which].w2),
    b2: P(m[which].b2),
  });
  return { k: one('k', c.dk), v: one('v', c.dv) };
}

function attentionForward64(
  c: ModelConfig,
  P: (n: string) => Float64Array,
  l: number,
  normed: Float64Array,
  B: number,
  selection?: Int32Array,
  dsaPhase?: DsaPhase,
): { out: Float64Array; cache: AttentionCache64 } {
  const { T, N, C, H, G } = refDims(c, B);
  const w = layerParamNames(l);
  const q = rope64(c, matmulRef(normed, P(w.wq), N, H * c.dk, C), N, T, H, false);
  const taps = shortConvTaps(c);
  const names = kvWeightNames(c, l);
  const kRaw = names.map(([wk]) => matmulRef(normed, P(wk), N, G * c.dk, C));
  const kv = names.map(([, wv, kConv], i) => ({
    k: rope64(c, taps > 0 ? shortConvRef(kRaw[i], P(kConv), { rows: N, T, C: G * c.dk, K: taps }) : kRaw[i], N, T, G, false),
    v: matmulRef(normed, P(wv), N, G * c.dv, C),
  }));
  const convCache = taps > 0 ? { kRaw } : {};
  switch (c.attention) {
    case 'dense': {
      const at = attentionForwardRef(q, kv[0].k, kv[0].v, { B, T, H, G, dk: c.dk, dv: c.dv });
      return { out: at.out, cache: { q, kv, ...convCache } };
    }
    case 'window':
    case 'moba': {
      const m = mechanismForward64(c, q, kv[0].k, kv[0].v, B, selection);
      return { out: m.out, cache: { q, kv, ...convCache, mech: m.seqs } };
    }
    case 'dsa': {
      const dsa = c.dsa!;
      const perSeq = T * G * dsa.topK;
      const sels = selection && Array.from({ length: B }, (_, b) => selection.subarray(b * perSeq, (b + 1) * perSeq));
      const n = indexerParamNames(l);
      const W = { wqI: P(n.wqI), wkI: P(n.wkI), wwI: P(n.wwI) };
      const shape = { B, T, H, G, dk: c.dk, dv: c.dv, C, ropeTheta: usesRope(c) ? c.ropeTheta : undefined };
      const d = dsaLayerAttentionRef(normed, W, q, kv[0].k, kv[0].v, shape, dsa, dsaPhase ?? dsaPhaseAt(0, dsa), sels);
      return { out: d.out, cache: { q, kv, ...convCache, dsa: d } };
    }
    case 'nsa':
      break;
  }
  const nsa = c.nsa!;
  const gatesRaw = gateForwardRef(normed, P(w.wg), P(w.bg), N, C, H);
  const gates = applyGateAblation(gatesRaw, nsa.gates);
  const out = new Float64Array(N * H * c.dv);
  const pick = (i: number) => kv[Math.min(i, kv.length - 1)];
  const seqs: Array<{ inp: NsaInputs; fwd: NsaForward }> = [];
  for (let b = 0; b < B; b++) {
    const inp: NsaInputs = {
      q: seq(q, b, T, H * c.dk),
      kCmp: seq(pick(0).k, b, T, G * c.dk),
      vCmp: seq(pick(0).v, b, T, G * c.dv),
      kSel: seq(pick(1).k, b, T, G * c.dk),
      vSel: seq(pick(1).v, b, T, G * c.dv),
      kWin: seq(pick(2).k, b, T, G * c.dk),
      vWin: seq(pick(2).v, b, T, G * c.dv),
      gates: seq(gates, b, T, 3 * H),
      mlp: nsa.phi === 'mlp' ? cmpMlp64(P, l, c) : undefined,
    };
    const perSeq = T * G * nsa.nSel;
    const fwd = nsaForwardRef(
      inp,
      { T, H, G, dk: c.dk, dv: c.dv },
      nsa,
      selection ? { selection: selection.subarray(b * perSeq, (b + 1) * perSeq) } : {},
    );
    out.set(fwd.o, b * T * H * c.dv);
    seqs.push({ inp, fwd });
  }
  return { out, cache: { q, kv, ...convCache, gatesRaw, nsa: seqs } };
}

/** From d(attention output) to d(normed input); adds the layer's attention weight gradients. */
function attentionBackward64(
  c: ModelConfig,
  P: (n: string) => Float64Array,
  Gr: (n: string) => Float64Array,
  l: number,
  normed: Float64Array,
  cache: AttentionCache64,
  dattn: Float64Array,
  B: number,
): Float64Array {
  const { T, N, C, H, G } = refDims(c, B);
  const w = layerParamNames(l);
  // Gradients of each branch's (RoPE'd) k and v; several map to one weight pair when KV is shared.
  let dq: Float64Array;
  const dkv: Array<{ dk: Float64Array; dv: Float64Array; pair: number }> = [];
  const dn = new Float64Array(N * C);
  if (c.attention === 'dense') {
    const ab = attentionBackwardRef(cache.q, cache.kv[0].k, cache.kv[0].v, dattn, { B, T, H, G, dk: c.dk, dv: c.dv });
    dq = ab.dq;
    dkv.push({ dk: ab.dk, dv: ab.dv, pair: 0 });
  } else if (c.attention === 'window' || c.attention === 'moba') {
    const mb = mechanismBackward64(c, cache.q, cache.kv[0].k, cache.kv[0].v, cache.mech!, dattn, B);
    dq = mb.dq;
    dkv.push({ dk: mb.dk, dv: mb.dv, pair: 0 });
  } else if (c.attention === 'dsa') {
    // The sparse phase's main attention over the selected tokens (the warm-up has no main backward).
    const topK = c.dsa!.topK;
    const one = { T, H, G, dk: c.dk, dv: c.dv };
    dq = new Float64Array(N * H * c.dk);
    const dk = new Float64Array(N * G * c.dk);
    const dv = new Float64Array(N * G * c.dv);
    cache.dsa!.seqs.forEach(({ sel, fwd }, b) => {
      const part = (x: Float64Array, width: number) => seq(x, b, T, width);
      const g = dsaAttentionBackwardRef(
        part(cache.q, H * c.dk),
        part(cache.kv[0].k, G * c.dk),
        part(cache.kv[0].v, G * c.dv),
        sel,
        fwd,
        part(dattn, H * c.dv),
        one,
        topK,
      );
      dq.set(g.dq, b * T * H * c.dk);
      dk.set(g.dK, b * T * G * c.dk);
      dv.set(g.dV, b * T * G * c.dv);
    });
    dkv.push({ dk, dv, pair: 0 });
  } else {
    const nsa = c.nsa!;
    dq = new Float64Array(N * H * c.dk);
    const branches = [0, 1, 2].map((i) => ({
      dk: new Float64Array(N * G * c.dk),
      dv: new Float64Array(N * G * c.dv),
      pair: Math.min(i, cache.kv.length - 1),
    }));
    const dGates = new Float64Array(N * 3 * H);
    cache.nsa!.forEach(({ inp, fwd }, b) => {
      const g = nsaBackwardRef(inp, { T, H, G, dk: c.dk, dv: c.dv }, nsa, fwd, seq(dattn, b, T, H * c.dv));
      dq.set(g.dq, b * T * H * c.dk);
      const put = (dst: Float64Array, src: Float64Array, width: number) => dst.set(src, b * T * width);
      put(branches[0].dk, g.dkCmp, G * c.dk);
      put(branches[0].dv, g.dvCmp, G * c.dv);
      put(branches[1].dk, g.dkSel, G * c.dk);
      put(branches[1].dv, g.dvSel, G * c.dv);
      put(branches[2].dk, g.dkWin, G * c.dk);
      put(branches[2].dv, g.dvWin, G * c.dv);
      dGates.set(g.dGates, b * T * 3 * H);
      if (nsa.phi === 'mlp') {
        const m = w.cmpMlp;
        for (const [which, dW] of [
          ['k', g.dMlpK!],
          ['v', g.dMlpV!],
        ] as const) {
          addInto(Gr(m[which].pos), dW.pos);
          addInto(Gr(m[which].w1), dW.w1);
          addInto(Gr(m[which].b1), dW.b1);
          addInto(Gr(m[which].w2), dW.w2);
          addInto(Gr(m[which].b2), dW.b2);
        }
      }
    });
    dkv.push(...branches);
    const gg = gateBackwardRef(normed, P(w.wg), cache.gatesRaw!, gateAblationBackward(dGates, nsa.gates), N, C, H);
    addInto(dn, gg.dx);
    addInto(Gr(w.wg), gg.dWg);
    addInto(Gr(w.bg), gg.dbg);
  }
  const dqr = rope64(c, dq, N, T, H, true);
  addInto(dn, matmulRef(dqr, P(w.wq), N, C, H * c.dk, { transB: true }));
  addInto(Gr(w.wq), matmulRef(normed, dqr, C, H * c.dk, N, { transA: true }));
  const names = kvWeightNames(c, l);
  const taps = shortConvTaps(c);
  for (const { dk, dv, pair } of dkv) {
    const [wk, wv, kConv] = names[pair];
    let dkr = rope64(c, dk, N, T, G, true);
    if (taps > 0) {
      const conv = shortConvBackwardRef(cache.kRaw![pair], P(kConv), dkr, { rows: N, T, C: G * c.dk, K: taps });
      addInto(Gr(kConv), conv.dw);
      dkr = conv.dx;
    }
    addInto(dn, matmulRef(dkr, P(wk), N, C, G * c.dk, { transB: true }));
    addInto(dn, matmulRef(dv, P(wv), N, C, G * c.dv, { transB: true }));
    addInto(Gr(wk), matmulRef(normed, dkr, C, G * c.dk, N, { transA: true }));
    addInto(Gr(wv), matmulRef(normed, dv, C, G * c.dv, N, { transA: true }));
  }
  return dn;
}
