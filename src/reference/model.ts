// Float64 twin of the whole dense model: forward, loss and every parameter gradient, composed
// from the per-kernel references in the same order as src/model/plan.ts. The one-step GPU test
// and finite-difference checks of the full model compare against this.
import type { ModelConfig } from '../model/config';
import { EMBEDDING, FINAL_NORM, layerParamNames, numel, paramSpecs } from '../model/params';
import { attentionBackwardRef, attentionForwardRef } from './attention';
import { crossEntropyRef } from './crossentropy';
import { embeddingBackwardRef, embeddingForwardRef } from './embedding';
import { matmulRef } from './matmul';
import { rmsnormBackwardRef, rmsnormForwardRef } from './rmsnorm';
import { ropeRef } from './rope';
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

interface LayerCache {
  x: Float64Array;
  attnNormed: Float64Array;
  attnRstd: Float64Array;
  q: Float64Array; // after RoPE
  k: Float64Array; // after RoPE
  v: Float64Array;
  attn: Float64Array;
  lse: Float64Array;
  xMid: Float64Array;
  mlpNormed: Float64Array;
  mlpRstd: Float64Array;
  a: Float64Array;
  b: Float64Array;
  h: Float64Array;
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
}

export function modelForwardRef(c: ModelConfig, p: Params64, tokens: ArrayLike<number>, targets: ArrayLike<number>, B: number): ModelForward64 {
  const T = c.seqLen;
  const N = B * T;
  const C = c.dim;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const F = c.ffnHidden;
  const P = (n: string) => {
    const v = p.get(n);
    if (!v) throw new Error(`missing parameter ${n}`);
    return v;
  };
  let x = embeddingForwardRef(tokens, P(EMBEDDING), N, C);
  const layers: LayerCache[] = [];
  for (let l = 0; l < c.nLayers; l++) {
    const w = layerParamNames(l);
    const n1 = rmsnormForwardRef(x, P(w.attnNorm), N, C, c.normEps);
    const q = ropeRef(matmulRef(n1.out, P(w.wq), N, H * c.dk, C), N, T, H, c.dk, c.ropeTheta, false);
    const k = ropeRef(matmulRef(n1.out, P(w.wk), N, G * c.dk, C), N, T, G, c.dk, c.ropeTheta, false);
    const v = matmulRef(n1.out, P(w.wv), N, G * c.dv, C);
    const at = attentionForwardRef(q, k, v, { B, T, H, G, dk: c.dk, dv: c.dv });
    const xMid = add(x, matmulRef(at.out, P(w.wo), N, C, H * c.dv));
    const n2 = rmsnormForwardRef(xMid, P(w.mlpNorm), N, C, c.normEps);
    const a = matmulRef(n2.out, P(w.w1), N, F, C);
    const b = matmulRef(n2.out, P(w.w3), N, F, C);
    const h = swigluForwardRef(a, b);
    const xNext = add(xMid, matmulRef(h, P(w.w2), N, C, F));
    layers.push({ x, attnNormed: n1.out, attnRstd: n1.rstd, q, k, v, attn: at.out, lse: at.lse, xMid, mlpNormed: n2.out, mlpRstd: n2.rstd, a, b, h });
    x = xNext;
  }
  const fin = rmsnormForwardRef(x, P(FINAL_NORM), N, C, c.normEps);
  const logits = matmulRef(fin.out, P(EMBEDDING), N, c.vocabSize, C, { transB: true });
  const ce = crossEntropyRef(logits, targets, N, c.vocabSize);
  let loss = 0;
  for (let i = 0; i < N; i++) loss += ce.losses[i];
  return { loss: loss / N, losses: ce.losses, logits, layers, xFinal: x, finalNormed: fin.out, finalRstd: fin.rstd };
}

/** Gradients of the mean loss with respect to every parameter. */
export function modelBackwardRef(c: ModelConfig, p: Params64, tokens: ArrayLike<number>, targets: ArrayLike<number>, B: number, fwd: ModelForward64): Params64 {
  const T = c.seqLen;
  const N = B * T;
  const C = c.dim;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const F = c.ffnHidden;
  const V = c.vocabSize;
  const P = (n: string) => p.get(n)!;
  const grads: Params64 = new Map(paramSpecs(c).map((s) => [s.name, new Float64Array(numel(s.shape))]));
  const Gr = (n: string) => grads.get(n)!;
  const dlogits = crossEntropyRef(fwd.logits, targets, N, V).dlogits;
  for (let i = 0; i < dlogits.length; i++) dlogits[i] /= N;
  const dFinalNormed = matmulRef(dlogits, P(EMBEDDING), N, C, V);
  addInto(Gr(EMBEDDING), matmulRef(dlogits, fwd.finalNormed, V, C, N, { transA: true }));
  const fb = rmsnormBackwardRef(dFinalNormed, fwd.xFinal, P(FINAL_NORM), fwd.finalRstd, N, C);
  addInto(Gr(FINAL_NORM), fb.dweight);
  const dx = fb.dx;
  for (let l = c.nLayers - 1; l >= 0; l--) {
    const w = layerParamNames(l);
    const L = fwd.layers[l];
    // MLP
    const dh = matmulRef(dx, P(w.w2), N, F, C, { transB: true });
    addInto(Gr(w.w2), matmulRef(L.h, dx, F, C, N, { transA: true }));
    const sw = swigluBackwardRef(dh, L.a, L.b);
    const dn2 = matmulRef(sw.da, P(w.w1), N, C, F, { transB: true });
    addInto(dn2, matmulRef(sw.db, P(w.w3), N, C, F, { transB: true }));
    addInto(Gr(w.w1), matmulRef(L.mlpNormed, sw.da, C, F, N, { transA: true }));
    addInto(Gr(w.w3), matmulRef(L.mlpNormed, sw.db, C, F, N, { transA: true }));
    const r2 = rmsnormBackwardRef(dn2, L.xMid, P(w.mlpNorm), L.mlpRstd, N, C);
    addInto(Gr(w.mlpNorm), r2.dweight);
    addInto(dx, r2.dx);
    // Attention
    const dattn = matmulRef(dx, P(w.wo), N, H * c.dv, C, { transB: true });
    addInto(Gr(w.wo), matmulRef(L.attn, dx, H * c.dv, C, N, { transA: true }));
    const ab = attentionBackwardRef(L.q, L.k, L.v, dattn, { B, T, H, G, dk: c.dk, dv: c.dv });
    const dq = ropeRef(ab.dq, N, T, H, c.dk, c.ropeTheta, true);
    const dk = ropeRef(ab.dk, N, T, G, c.dk, c.ropeTheta, true);
    const dn1 = matmulRef(dq, P(w.wq), N, C, H * c.dk, { transB: true });
    addInto(dn1, matmulRef(dk, P(w.wk), N, C, G * c.dk, { transB: true }));
    addInto(dn1, matmulRef(ab.dv, P(w.wv), N, C, G * c.dv, { transB: true }));
    addInto(Gr(w.wq), matmulRef(L.attnNormed, dq, C, H * c.dk, N, { transA: true }));
    addInto(Gr(w.wk), matmulRef(L.attnNormed, dk, C, G * c.dk, N, { transA: true }));
    addInto(Gr(w.wv), matmulRef(L.attnNormed, ab.dv, C, G * c.dv, N, { transA: true }));
    const r1 = rmsnormBackwardRef(dn1, L.x, P(w.attnNorm), L.attnRstd, N, C);
    addInto(Gr(w.attnNorm), r1.dweight);
    addInto(dx, r1.dx);
  }
  addInto(Gr(EMBEDDING), embeddingBackwardRef(tokens, dx, V, C));
  return grads;
}
