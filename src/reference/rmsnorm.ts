// Float64 twin of shaders/rmsnorm.wgsl. Per row of C: out = x · rstd · weight,
// rstd = 1 / sqrt(mean(x²) + eps).

export function rmsnormForwardRef(
  x: ArrayLike<number>,
  weight: ArrayLike<number>,
  rows: number,
  C: number,
  eps: number,
): { out: Float64Array; rstd: Float64Array } {
  const out = new Float64Array(rows * C);
  const rstd = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let ss = 0;
    for (let c = 0; c < C; c++) ss += x[r * C + c] ** 2;
    const s = 1 / Math.sqrt(ss / C + eps);
    rstd[r] = s;
    for (let c = 0; c < C; c++) out[r * C + c] = x[r * C + c] * s * weight[c];
  }
  return { out, rstd };
}

/**
 * With g = dout ⊙ weight: dx = rstd · (g − x · rstd² · mean(g ⊙ x)) per row (rstd depends on x);
 * dweight = Σ_rows dout ⊙ x · rstd. Both fresh (the GPU wrapper adds the accumulate flags).
 */
export function rmsnormBackwardRef(
  dout: ArrayLike<number>,
  x: ArrayLike<number>,
  weight: ArrayLike<number>,
  rstd: ArrayLike<number>,
  rows: number,
  C: number,
): { dx: Float64Array; dweight: Float64Array } {
  const dx = new Float64Array(rows * C);
  const dweight = new Float64Array(C);
  for (let r = 0; r < rows; r++) {
    const s = rstd[r];
    let dot = 0;
    for (let c = 0; c < C; c++) dot += dout[r * C + c] * weight[c] * x[r * C + c];
    const k = (dot * s * s) / C;
    for (let c = 0; c < C; c++) {
      const i = r * C + c;
      dx[i] = s * (dout[i] * weight[c] - x[i] * k);
      dweight[c] += dout[i] * x[i] * s;
    }
  }
  return { dx, dweight };
}
