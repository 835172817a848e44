// Compression φ of the compressed branch: block k of group g (positions [k·d, k·d + l)) → one
// vector. X is [T,G,D] (K_cmp with D = dk, or V_cmp with D = dv); the result is [Ncmp,G,D].
//
// φ = avg: the mean of the l vectors.
// φ = mlp (paper eq. 7), one hidden layer, weights shared by all groups, separate for K and V:
//   z   = flatten_i (X[k·d+i, g] + pos[i])        ∈ R^{l·D}   (pos: intra-block position embedding)
//   a   = gelu(z·W1 + b1)                         ∈ R^{Dh}    (GELU, tanh form: smooth, WGSL-friendly)
//   out = a·W2 + b2                               ∈ R^{D}
// Shapes: pos [l,D], W1 [l·D, Dh], b1 [Dh], W2 [Dh, D], b2 [D] (weights [in, out] as elsewhere).
// With a linear first layer pos could be folded into b1; it is kept as the spec's named parameter.
import { numCmpBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig } from '../../definitions/nsa-config';

export interface CmpMlpWeights {
  /** Vector width D (dk for keys, dv for values). */
  dIn: number;
  /** Hidden width Dh. */
  dHidden: number;
  pos: Float64Array;
  w1: Float64Array;
  b1: Float64Array;
  w2: Float64Array;
  b2: Float64Array;
}

export type CmpMlpGrads = Omit<CmpMlpWeights, 'dIn' | 'dHidden'>;

/** The two MLPs of a layer's compressed branch. */
export interface CmpMlpPair {
  k: CmpMlpWeights;
  v: CmpMlpWeights;
}

export interface CompressForward {
  /** [Ncmp,G,D]. */
  out: Float64Array;
  /** MLP pre-activations z·W1 + b1, [Ncmp,G,Dh] (empty for φ = avg). */
  hPre: Float64Array;
}

const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

export function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_C * (x + GELU_A * x * x * x)));
}

export function geluGrad(x: number): number {
  const th = Math.tanh(GELU_C * (x + GELU_A * x * x * x));
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * GELU_A * x * x);
}

export function checkMlpWeights(W: CmpMlpWeights, D: number, c: NsaConfig): void {
  const { dIn, dHidden: Dh } = W;
  const want: Array<[string, number, number]> = [
    ['dIn', dIn, D],
    ['pos', W.pos.length, c.l * D],
    ['w1', W.w1.length, c.l * D * Dh],
    ['b1', W.b1.length, Dh],
    ['w2', W.w2.length, Dh * D],
    ['b2', W.b2.length, D],
  ];
  for (const [name, got, exp] of want) {
    if (got !== exp || !(Dh >= 1)) throw new Error(`compression MLP: ${name} has size ${got}, expected ${exp} (Dh=${Dh})`);
  }
}

/** φ = avg of block k, group g into out[outOff..outOff+D). */
export function compressBlockAvg(
  X: ArrayLike<number>,
  k: number,
  g: number,
  G: number,
  D: number,
  c: NsaConfig,
  out: Float64Array,
  outOff: number,
): void {
  for (let e = 0; e < D; e++) {
    let s = 0;
    for (let i = 0; i < c.l; i++) s += X[((k * c.d + i) * G + g) * D + e];
    out[outOff + e] = s / c.l;
  }
}

/** φ = mlp of block k, group g into out[outOff..+D), pre-activations into hPre[hOff..+Dh). */
export function compressBlockMlp(
  X: ArrayLike<number>,
  k: number,
  g: number,
  G: number,
  W: CmpMlpWeights,
  c: NsaConfig,
  out: Float64Array,
  outOff: number,
  hPre: Float64Array,
  hOff: number,
): void {
  const D = W.dIn;
  const Dh = W.dHidden;
  const z = blockInput(X, k, g, G, W, c);
  for (let u = 0; u < Dh; u++) {
    let s = W.b1[u];
    for (let r = 0; r < c.l * D; r++) s += z[r] * W.w1[r * Dh + u];
    hPre[hOff + u] = s;
  }
  for (let e = 0; e < D; e++) {
    let s = W.b2[e];
    for (let u = 0; u < Dh; u++) s += gelu(hPre[hOff + u]) * W.w2[u * D + e];
    out[outOff + e] = s;
  }
}

function blockInput(X: ArrayLike<number>, k: number, g: number, G: number, W: CmpMlpWeights, c: NsaConfig): Float64Array {
  const D = W.dIn;
  const z = new Float64Array(c.l * D);
  for (let i = 0; i < c.l; i++) {
    for (let e = 0; e < D; e++) z[i * D + e] = X[((k * c.d + i) * G + g) * D + e] + W.pos[i * D + e];
  }
  return z;
}

/** Compress all Ncmp(T) blocks. `mlp` is required for φ = mlp and must have dIn = D. */
export function compressRef(X: ArrayLike<number>, T: number, G: number, D: number, c: NsaConfig, mlp?: CmpMlpWeights): CompressForward {
  const N = numCmpBlocks(T, c);
  const out = new Float64Array(N * G * D);
  if (c.phi === 'avg') {
    for (let k = 0; k < N; k++) for (let g = 0; g < G; g++) compressBlockAvg(X, k, g, G, D, c, out, (k * G + g) * D);
    return { out, hPre: new Float64Array(0) };
  }
  if (!mlp) throw new Error('compressRef: phi = mlp needs MLP weights');
  checkMlpWeights(mlp, D, c);
  const Dh = mlp.dHidden;
  const hPre = new Float64Array(N * G * Dh);
  for (let k = 0; k < N; k++) {
    for (let g = 0; g < G; g++) compressBlockMlp(X, k, g, G, mlp, c, out, (k * G + g) * D, hPre, (k * G + g) * Dh);
  }
  return { out, hPre };
}

export interface CompressGrads {
  /** [T,G,D]. */
  dX: Float64Array;
  /** φ = mlp only. */
  dW?: CmpMlpGrads;
}

/**
 * Backward of compressRef given dOut [Ncmp,G,D]. dX is gathered per position over the blocks
 * that contain it (ascending k), as a kernel without float atomics would.
 */
export function compressBackwardRef(
  X: ArrayLike<number>,
  T: number,
  G: number,
  D: number,
  c: NsaConfig,
  fwd: CompressForward,
  dOut: ArrayLike<number>,
  mlp?: CmpMlpWeights,
): CompressGrads {
  const N = numCmpBlocks(T, c);
  const dX = new Float64Array(T * G * D);
  // dIn[k,g] = ∂L/∂(block input row i of block k) for each i: [N,G,l,D].
  const dIn = new Float64Array(N * G * c.l * D);
  let dW: CmpMlpGrads | undefined;
  if (c.phi === 'avg') {
    for (let k = 0; k < N; k++) {
      for (let g = 0; g < G; g++) {
        for (let i = 0; i < c.l; i++) {
          for (let e = 0; e < D; e++) dIn[((k * G + g) * c.l + i) * D + e] = dOut[(k * G + g) * D + e] / c.l;
        }
      }
    }
  } else {
    if (!mlp) throw new Error('compressBackwardRef: phi = mlp needs MLP weights');
    checkMlpWeights(mlp, D, c);
    const Dh = mlp.dHidden;
    const grads: CmpMlpGrads = {
      pos: new Float64Array(c.l * D),
      w1: new Float64Array(c.l * D * Dh),
      b1: new Float64Array(Dh),
      w2: new Float64Array(Dh * D),
      b2: new Float64Array(D),
    };
    const dH = new Float64Array(Dh);
    for (let k = 0; k < N; k++) {
      for (let g = 0; g < G; g++) {
        const kg = k * G + g;
        const z = blockInput(X, k, g, G, mlp, c);
        for (let u = 0; u < Dh; u++) {
          const hp = fwd.hPre[kg * Dh + u];
          const a = gelu(hp);
          let da = 0;
          for (let e = 0; e < D; e++) {
            const go = dOut[kg * D + e];
            grads.w2[u * D + e] += a * go;
            da += go * mlp.w2[u * D + e];
          }
          dH[u] = da * geluGrad(hp);
          grads.b1[u] += dH[u];
        }
        for (let e = 0; e < D; e++) grads.b2[e] += dOut[kg * D + e];
        for (let r = 0; r < c.l * D; r++) {
          let dz = 0;
          for (let u = 0; u < Dh; u++) {
            grads.w1[r * Dh + u] += z[r] * dH[u];
            dz += dH[u] * mlp.w1[r * Dh + u];
          }
          dIn[kg * c.l * D + r] = dz;
          grads.pos[r] += dz;
        }
      }
    }
    dW = grads;
  }
  // Gather: position s is row i = s − k·d of every block k with k·d ≤ s < k·d + l.
  for (let s = 0; s < T; s++) {
    const kLo = Math.max(0, Math.ceil((s - c.l + 1) / c.d));
    const kHi = Math.min(N - 1, Math.floor(s / c.d));
    for (let k = kLo; k <= kHi; k++) {
      const i = s - k * c.d;
      for (let g = 0; g < G; g++) {
        for (let e = 0; e < D; e++) dX[(s * G + g) * D + e] += dIn[((k * G + g) * c.l + i) * D + e];
      }
    }
  }
  return dW ? { dX, dW } : { dX };
}
