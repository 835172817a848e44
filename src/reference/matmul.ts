// Float64 twin of shaders/matmul.wgsl: C[M,N] = op(A)·op(B) (+ c when given).
// op(A) = A stored [M,K], or its transpose when A is stored [K,M] (transA); likewise B [K,N] / [N,K].
export function matmulRef(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  M: number,
  N: number,
  K: number,
  opts: { transA?: boolean; transB?: boolean; c?: ArrayLike<number> } = {},
): Float64Array {
  const { transA = false, transB = false, c } = opts;
  if (a.length < M * K || b.length < K * N) throw new Error(`matmulRef: inputs too short for ${M}x${N}x${K}`);
  if (c && c.length < M * N) throw new Error(`matmulRef: c too short for ${M}x${N}`);
  const out = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = c ? c[m * N + n] : 0;
      for (let k = 0; k < K; k++) {
        const x = transA ? a[k * M + m] : a[m * K + k];
        const y = transB ? b[n * K + k] : b[k * N + n];
        s += x * y;
      }
      out[m * N + n] = s;
    }
  }
  return out;
}
