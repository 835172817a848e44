// Float64 twin of shaders/short_conv.wgsl, written from the definition (docs/nsa-spec.md 3.1):
// y_t = Σ_{i=0}^{K−1} w_{K−1−i} ⊙ x_{t−i}, x before the sequence's start taken as 0. x and y are
// [rows, C] with row r at position r % T; w is [C, K] (torch's depthwise Conv1d weight [C, 1, K]).

export interface ShortConvRefShape {
  rows: number;
  T: number;
  C: number;
  K: number;
}

export function shortConvRef(x: ArrayLike<number>, w: ArrayLike<number>, s: ShortConvRefShape): Float64Array {
  const y = new Float64Array(s.rows * s.C);
  for (let r = 0; r < s.rows; r++) {
    const t = r % s.T;
    for (let i = 0; i < s.K && i <= t; i++)
      for (let c = 0; c < s.C; c++) y[r * s.C + c] += w[c * s.K + (s.K - 1 - i)] * x[(r - i) * s.C + c];
  }
  return y;
}

/** The gradients of ⟨y, dy⟩ with respect to x [rows, C] and w [C, K]. */
export function shortConvBackwardRef(
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  dy: ArrayLike<number>,
  s: ShortConvRefShape,
): { dx: Float64Array; dw: Float64Array } {
  const dx = new Float64Array(s.rows * s.C);
  const dw = new Float64Array(s.C * s.K);
  for (let r = 0; r < s.rows; r++) {
    const t = r % s.T;
    for (let i = 0; i < s.K && i <= t; i++)
      for (let c = 0; c < s.C; c++) {
        const tap = c * s.K + (s.K - 1 - i);
        dx[(r - i) * s.C + c] += w[tap] * dy[r * s.C + c];
        dw[tap] += x[(r - i) * s.C + c] * dy[r * s.C + c];
      }
  }
  return { dx, dw };
}
