// Float64 twin of shaders/swiglu.wgsl: out = silu(a) · b, silu(a) = a · sigmoid(a).

const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));

export function swigluForwardRef(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] * sigmoid(a[i]) * b[i];
  return out;
}

/** da = dout · b · silu'(a), silu'(a) = σ(a)(1 + a(1 − σ(a))); db = dout · silu(a). */
export function swigluBackwardRef(
  dout: ArrayLike<number>,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
): { da: Float64Array; db: Float64Array } {
  const da = new Float64Array(a.length);
  const db = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const s = sigmoid(a[i]);
    da[i] = dout[i] * b[i] * s * (1 + a[i] * (1 - s));
    db[i] = dout[i] * a[i] * s;
  }
  return { da, db };
}
