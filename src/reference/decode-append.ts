// Float64 twin of the GPU decode's K/V append (shaders/decode_rows.wgsl's appendKV, one KV set or
// several in one dispatch): the new token's key, rotated to position t by the cos/sin table
// [cap, dk/2, 2] (pairs (j, j + dk/2)), and its value go into row t mod rows of every (b, g) of
// the caches [B, rows, G, dk|dv]; every other row is left as it was.

/** The caches after appending k [B, G, dk] and v [B, G, dv] at position t (copies; inputs untouched). */
export function appendKvRow(
  t: number,
  table: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  kCache: ArrayLike<number>,
  vCache: ArrayLike<number>,
  dims: { B: number; G: number; dk: number; dv: number; rows: number },
): { kCache: Float64Array; vCache: Float64Array } {
  const { B, G, dk, dv, rows } = dims;
  const K = Float64Array.from(kCache);
  const V = Float64Array.from(vCache);
  const half = dk / 2;
  for (let b = 0; b < B; b++)
    for (let g = 0; g < G; g++) {
      const bg = b * G + g;
      const row = (b * rows + (t % rows)) * G + g;
      for (let j = 0; j < half; j++) {
        const c = table[(t * half + j) * 2];
        const s = table[(t * half + j) * 2 + 1];
        const x0 = k[bg * dk + j];
        const x1 = k[bg * dk + j + half];
        K[row * dk + j] = x0 * c - x1 * s;
        K[row * dk + j + half] = x0 * s + x1 * c;
      }
      for (let e = 0; e < dv; e++) V[row * dv + e] = v[bg * dv + e];
    }
  return { kCache: K, vCache: V };
}
