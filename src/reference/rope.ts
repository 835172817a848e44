// Float64 twin of shaders/rope.wgsl. x is [rows, heads, headDim]; row r sits at position r % T.
// Pairs (j, j + headDim/2) rotate by angle pos · theta^(−2j/headDim); inverse rotates by −angle,
// which is the transpose (adjoint) of the forward rotation, hence its backward.

export function ropeRef(
  x: ArrayLike<number>,
  rows: number,
  T: number,
  heads: number,
  headDim: number,
  theta: number,
  inverse: boolean,
): Float64Array {
  const half = headDim / 2;
  const out = new Float64Array(rows * heads * headDim);
  for (let r = 0; r < rows; r++) {
    const pos = r % T;
    for (let h = 0; h < heads; h++) {
      const base = (r * heads + h) * headDim;
      for (let j = 0; j < half; j++) {
        const a = pos * theta ** ((-2 * j) / headDim);
        const c = Math.cos(a);
        const s = inverse ? -Math.sin(a) : Math.sin(a);
        const x0 = x[base + j];
        const x1 = x[base + j + half];
        out[base + j] = x0 * c - x1 * s;
        out[base + j + half] = x0 * s + x1 * c;
      }
    }
  }
  return out;
}
