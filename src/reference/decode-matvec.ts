// Float64 twin of the GPU decode's split matrix-vector product (shaders/decode_matvec.wgsl): K cut
// into `splits` chunks of ceil(K / splits) inputs (the last shorter); chunk c's partial sum of
// output (r, n) is Σ x[r, k]·W[k, n] over its k; the output is the sum of the chunks (plus the old
// value with `accumulate`). W is [K, N], or [N, K] with `transW`.

/** The partial sums [splits, rows, N]. */
export function matvecPartials(
  x: ArrayLike<number>,
  W: ArrayLike<number>,
  rows: number,
  K: number,
  N: number,
  splits: number,
  transW = false,
): Float64Array {
  const out = new Float64Array(splits * rows * N);
  const len = Math.ceil(K / splits);
  for (let c = 0; c < splits; c++) {
    const k0 = Math.min(K, c * len);
    const k1 = Math.min(K, k0 + len);
    for (let r = 0; r < rows; r++)
      for (let n = 0; n < N; n++) {
        let s = 0;
        for (let k = k0; k < k1; k++) s += x[r * K + k] * W[transW ? n * K + k : k * N + n];
        out[(c * rows + r) * N + n] = s;
      }
  }
  return out;
}

/** The outputs [rows, N]: the chunks' sum, added to `prior` when given (the residual stream). */
export function matvecCombine(part: ArrayLike<number>, total: number, splits: number, prior?: ArrayLike<number>): Float64Array {
  const out = new Float64Array(total);
  for (let i = 0; i < total; i++) {
    let s = 0;
    for (let c = 0; c < splits; c++) s += part[c * total + i];
    out[i] = (prior ? prior[i] : 0) + s;
  }
  return out;
}

/**
 * A group of products of one x (decode_matvec.wgsl with P.members > 0): W_j [K, N_j] side by side
 * as one [K, Σ N_j] product cut in `splits` chunks; the partial sums [splits, rows, Σ N_j].
 */
export function matvecGroupPartials(
  x: ArrayLike<number>,
  members: ReadonlyArray<{ W: ArrayLike<number>; N: number }>,
  rows: number,
  K: number,
  splits: number,
): Float64Array {
  const N = members.reduce((s, m) => s + m.N, 0);
  const W = new Float64Array(K * N);
  let first = 0;
  for (const m of members) {
    for (let k = 0; k < K; k++) for (let n = 0; n < m.N; n++) W[k * N + first + n] = m.W[k * m.N + n];
    first += m.N;
  }
  return matvecPartials(x, W, rows, K, N, splits);
}

/** Each member's outputs [rows, N_j] from the group's partial sums (chunks added in order). */
export function matvecGroupCombine(part: ArrayLike<number>, rows: number, Ns: readonly number[], splits: number): Float64Array[] {
  const N = Ns.reduce((s, n) => s + n, 0);
  const all = matvecCombine(part, rows * N, splits);
  let first = 0;
  return Ns.map((Nj) => {
    const out = new Float64Array(rows * Nj);
    for (let r = 0; r < rows; r++) for (let n = 0; n < Nj; n++) out[r * Nj + n] = all[r * N + first + n];
    first += Nj;
    return out;
  });
}

/** A gated group (two products of N0 outputs, w1 and w3): silu(y0) · y1 [rows, N0] from their partial sums. */
export function matvecGroupGated(part: ArrayLike<number>, rows: number, N0: number, splits: number): Float64Array {
  const [y0, y1] = matvecGroupCombine(part, rows, [N0, N0], splits);
  return y0.map((a, i) => (a / (1 + Math.exp(-a))) * y1[i]);
}
