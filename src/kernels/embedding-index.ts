// CPU-built reverse index of a token batch, uploaded next to the tokens, so the embedding backward
// can give each distinct token its own workgroup and sum its positions in a fixed order, without
// atomics. Layout of the Int32Array (length 3N + 2):
//   [U, uniq[0..N), segStart[0..N], order[0..N)]
// uniq[0..U): the distinct token ids, ascending (uniq[U..N) = −1);
// order[segStart[u] .. segStart[u+1]): the positions holding uniq[u], ascending;
// segStart[U] = N (segStart[U+1..N] = N as well).

export function tokenIndexLength(N: number): number {
  return 3 * N + 2;
}

/** Builds the index of `tokens`; writes into `out` (no allocation) when given. */
export function buildTokenIndex(tokens: Int32Array, out?: Int32Array): Int32Array {
  const N = tokens.length;
  const len = tokenIndexLength(N);
  if (out && out.length < len) throw new Error(`buildTokenIndex: out has length ${out.length}; needs ${len} for N=${N}`);
  const idx = out ?? new Int32Array(len);
  for (let n = 0; n < N; n++) {
    if (tokens[n] < 0) throw new Error(`buildTokenIndex: tokens[${n}] = ${tokens[n]} is negative`);
  }
  const uniq = 1;
  const seg = 1 + N;
  const order = idx.subarray(2 + 2 * N, 2 + 3 * N);
  for (let n = 0; n < N; n++) order[n] = n;
  // In place: positions by (token, position). A typed-array sort with a comparator allocates nothing.
  order.sort((p, q) => tokens[p] - tokens[q] || p - q);
  let U = 0;
  for (let k = 0; k < N; k++) {
    const t = tokens[order[k]];
    if (U === 0 || idx[uniq + U - 1] !== t) {
      idx[uniq + U] = t;
      idx[seg + U] = k;
      U++;
    }
  }
  for (let u = U; u < N; u++) idx[uniq + u] = -1;
  for (let u = U; u <= N; u++) idx[seg + u] = N;
  idx[0] = U;
  return idx;
}
