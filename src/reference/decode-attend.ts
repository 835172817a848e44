// Float64 twin of the GPU decode's split attention (shaders/decode_attend.wgsl): one (b, head)'s
// new query over n keys numbered in order, cut into `splits` chunks of ceil(n / splits)
// consecutive keys (the last shorter, some empty when n < splits). Each chunk's partial is its
// scores' max m, the sum l of exp(s − m) and acc = Σ exp(s − m)·v; the combine merges them in chunk
// order: out = Σ e^(m_c − M)·acc_c / Σ e^(m_c − M)·l_c, M = max m_c (0 with no key). With given
// weights (the compressed branch, whose p_cmp the selection computed) a chunk's acc is Σ p·v and
// out = Σ acc_c.

export interface AttendPartial {
  /** The chunk's max score (−∞ when empty; 0 with given weights). */
  m: number;
  /** Σ exp(s − m) over the chunk (0 when empty; 1 with given weights). */
  l: number;
  /** Keys in the chunk. */
  keys: number;
  /** [dv]: Σ exp(s − m)·v (or Σ p·v). */
  acc: Float64Array;
}

/** The chunks [o0, o1) of n keys in `splits` parts, as the kernel cuts them. */
export function attendChunks(n: number, splits: number): Array<[number, number]> {
  const len = Math.ceil(n / splits);
  return Array.from({ length: splits }, (_, c) => {
    const o0 = Math.min(n, c * len);
    return [o0, Math.min(n, o0 + len)];
  });
}

/**
 * Partials of one query over keys k[o] / values v[o] (o < n, rows of dk and dv numbers):
 * scores q·k·scale, or the given weights (`weights`, the compressed branch).
 */
export function attendPartials(
  q: ArrayLike<number>,
  keys: ReadonlyArray<ArrayLike<number>>,
  values: ReadonlyArray<ArrayLike<number>>,
  dv: number,
  scale: number,
  splits: number,
  weights?: ArrayLike<number>,
): AttendPartial[] {
  return attendChunks(values.length, splits).map(([o0, o1]) => {
    const acc = new Float64Array(dv);
    if (weights) {
      for (let o = o0; o < o1; o++) for (let c = 0; c < dv; c++) acc[c] += weights[o] * values[o][c];
      return { m: o1 > o0 ? 0 : -Infinity, l: o1 > o0 ? 1 : 0, keys: o1 - o0, acc };
    }
    const s: number[] = [];
    for (let o = o0; o < o1; o++) {
      let a = 0;
      for (let c = 0; c < q.length; c++) a += q[c] * keys[o][c];
      s.push(a * scale);
    }
    const m = s.length ? Math.max(...s) : -Infinity;
    let l = 0;
    s.forEach((x, i) => {
      const e = Math.exp(x - m);
      l += e;
      for (let c = 0; c < dv; c++) acc[c] += e * values[o0 + i][c];
    });
    return { m, l, keys: o1 - o0, acc };
  });
}

/** The combine of the partials (in chunk order): the attention output [dv] and the keys read. */
export function attendCombine(parts: readonly AttendPartial[], weighted: boolean, dv: number): { out: Float64Array; keys: number } {
  const out = new Float64Array(dv);
  const keys = parts.reduce((s, p) => s + p.keys, 0);
  if (weighted) {
    for (const p of parts) for (let c = 0; c < dv; c++) out[c] += p.acc[c];
    return { out, keys };
  }
  const M = Math.max(...parts.map((p) => p.m));
  if (!(M > -Infinity)) return { out, keys };
  let L = 0;
  for (const p of parts) {
    const f = Math.exp(p.m - M);
    L += f * p.l;
    for (let c = 0; c < dv; c++) out[c] += f * p.acc[c];
  }
  for (let c = 0; c < dv; c++) out[c] /= L;
  return { out, keys };
}
