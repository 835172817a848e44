// Float64 twin of shaders/embedding.wgsl: a row gather and its adjoint (a scatter-add per token).

/** out[n, :] = table[tokens[n], :]. */
export function embeddingForwardRef(tokens: ArrayLike<number>, table: ArrayLike<number>, N: number, C: number): Float64Array {
  const out = new Float64Array(N * C);
  for (let n = 0; n < N; n++) {
    const t = tokens[n];
    for (let c = 0; c < C; c++) out[n * C + c] = table[t * C + c];
  }
  return out;
}

/** dtable[v, :] = Σ over positions n with tokens[n] = v of dout[n, :] (a fresh [V, C] gradient). */
export function embeddingBackwardRef(tokens: ArrayLike<number>, dout: ArrayLike<number>, V: number, C: number): Float64Array {
  const dtable = new Float64Array(V * C);
  for (let n = 0; n < tokens.length; n++) {
    const t = tokens[n];
    for (let c = 0; c < C; c++) dtable[t * C + c] += dout[n * C + c];
  }
  return dtable;
}
