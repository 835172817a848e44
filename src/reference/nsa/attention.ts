// Float64 sparse attention shared by the three NSA branches: each branch is a key pattern (which
// key rows query t of group g reads, and its transpose). The backward follows docs/nsa-spec.md's
// atomic-free scheme: dQ per query row, dK/dV per key row by looping over the queries reading it.

/** Which keys each query reads, and its exact transpose. Both lists ascending. */
export interface KeyPattern {
  keys(t: number, g: number): ArrayLike<number>;
  queries(s: number, g: number): ArrayLike<number>;
}

/** T queries over S key rows; q [T,H,dk], K [S,G,dk], V [S,G,dv]. */
export interface AttentionDims {
  T: number;
  S: number;
  H: number;
  G: number;
  dk: number;
  dv: number;
}

export interface AttentionForward {
  /** [T,H,dv]; exactly 0 for a query with no keys. */
  o: Float64Array;
  /** Log-sum-exp of the scaled scores, [H,T]; −Infinity for a query with no keys. */
  lse: Float64Array;
}

export interface AttentionGrads {
  dq: Float64Array;
  dK: Float64Array;
  dV: Float64Array;
}

export function dot(a: ArrayLike<number>, ao: number, b: ArrayLike<number>, bo: number, n: number): number {
  let s = 0;
  for (let c = 0; c < n; c++) s += a[ao + c] * b[bo + c];
  return s;
}

/** Stable softmax of s[0..n) in place; returns the log-sum-exp (−Infinity when n = 0). */
export function softmaxInPlace(s: Float64Array, n: number): number {
  if (n === 0) return -Infinity;
  let m = -Infinity;
  for (let j = 0; j < n; j++) m = Math.max(m, s[j]);
  let z = 0;
  for (let j = 0; j < n; j++) {
    s[j] = Math.exp(s[j] - m);
    z += s[j];
  }
  for (let j = 0; j < n; j++) s[j] /= z;
  return m + Math.log(z);
}

export function range(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let i = lo; i < hi; i++) out.push(i);
  return out;
}

/**
 * Forward. `onRow(t, i, keys, p)` sees each row's probabilities over its key list (the compressed
 * branch stores them for the selection scores).
 */
export function sparseAttentionForward(
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  dims: AttentionDims,
  pat: KeyPattern,
  onRow?: (t: number, i: number, keys: ArrayLike<number>, p: Float64Array) => void,
): AttentionForward {
  const { T, H, G, dk, dv } = dims;
  const h = H / G;
  const scale = 1 / Math.sqrt(dk);
  const o = new Float64Array(T * H * dv);
  const lse = new Float64Array(H * T);
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) {
      const keys = pat.keys(t, g);
      const n = keys.length;
      const p = new Float64Array(n);
      for (let i = g * h; i < (g + 1) * h; i++) {
        const qo = (t * H + i) * dk;
        for (let j = 0; j < n; j++) p[j] = dot(q, qo, K, (keys[j] * G + g) * dk, dk) * scale;
        lse[i * T + t] = softmaxInPlace(p, n);
        const oo = (t * H + i) * dv;
        for (let j = 0; j < n; j++) {
          const vo = (keys[j] * G + g) * dv;
          for (let c = 0; c < dv; c++) o[oo + c] += p[j] * V[vo + c];
        }
        onRow?.(t, i, keys, p);
      }
    }
  }
  return { o, lse };
}

/** Backward of sparseAttentionForward given dO [T,H,dv]; p is recomputed from lse. */
export function sparseAttentionBackward(
  q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  dims: AttentionDims,
  pat: KeyPattern,
): AttentionGrads {
  const { T, S, H, G, dk, dv } = dims;
  const h = H / G;
  const scale = 1 / Math.sqrt(dk);
  const { o, lse } = fwd;
  // D[t,i] = dO·O: the softmax backward's row term.
  const D = new Float64Array(T * H);
  for (let r = 0; r < T * H; r++) D[r] = dot(dO, r * dv, o, r * dv, dv);
  const prob = (t: number, i: number, s: number, g: number) =>
    Math.exp(dot(q, (t * H + i) * dk, K, (s * G + g) * dk, dk) * scale - lse[i * T + t]);

  const dq = new Float64Array(T * H * dk);
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) {
      const keys = pat.keys(t, g);
      for (let i = g * h; i < (g + 1) * h; i++) {
        const r = t * H + i;
        for (let j = 0; j < keys.length; j++) {
          const s = keys[j];
          const ds = prob(t, i, s, g) * (dot(dO, r * dv, V, (s * G + g) * dv, dv) - D[r]);
          const ko = (s * G + g) * dk;
          for (let c = 0; c < dk; c++) dq[r * dk + c] += scale * ds * K[ko + c];
        }
      }
    }
  }

  const dK = new Float64Array(S * G * dk);
  const dV = new Float64Array(S * G * dv);
  for (let s = 0; s < S; s++) {
    for (let g = 0; g < G; g++) {
      const qs = pat.queries(s, g);
      const ko = (s * G + g) * dk;
      const vo = (s * G + g) * dv;
      for (let m = 0; m < qs.length; m++) {
        const t = qs[m];
        for (let i = g * h; i < (g + 1) * h; i++) {
          const r = t * H + i;
          const p = prob(t, i, s, g);
          for (let c = 0; c < dv; c++) dV[vo + c] += p * dO[r * dv + c];
          const ds = p * (dot(dO, r * dv, V, vo, dv) - D[r]);
          for (let c = 0; c < dk; c++) dK[ko + c] += scale * ds * q[r * dk + c];
        }
      }
    }
  }
  return { dq, dK, dV };
}
