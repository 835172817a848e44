// Float64 twin of shaders/attention_*.wgsl: dense causal attention with grouped-query heads.
// Layout (row-major): q [B,T,H,dk], k [B,T,G,dk], v [B,T,G,dv], out [B,T,H,dv], lse [B,H,T].
// Head i reads group floor(i / (H/G)); query t attends to keys s ≤ t; scale 1/sqrt(dk).
import type { AttentionShape } from '../definitions/shapes';

const qIdx = (s: AttentionShape, b: number, t: number, h: number) => ((b * s.T + t) * s.H + h) * s.dk;
const kIdx = (s: AttentionShape, b: number, t: number, g: number) => ((b * s.T + t) * s.G + g) * s.dk;
const vIdx = (s: AttentionShape, b: number, t: number, g: number) => ((b * s.T + t) * s.G + g) * s.dv;
const oIdx = (s: AttentionShape, b: number, t: number, h: number) => ((b * s.T + t) * s.H + h) * s.dv;

/** Softmax weights p[0..t] of query (b, t, head h) and their log-sum-exp. */
function probs(q: ArrayLike<number>, k: ArrayLike<number>, s: AttentionShape, b: number, t: number, h: number) {
  const g = Math.floor(h / (s.H / s.G));
  const scale = 1 / Math.sqrt(s.dk);
  const qo = qIdx(s, b, t, h);
  const sc = new Float64Array(t + 1);
  let m = -Infinity;
  for (let j = 0; j <= t; j++) {
    const ko = kIdx(s, b, j, g);
    let d = 0;
    for (let c = 0; c < s.dk; c++) d += q[qo + c] * k[ko + c];
    sc[j] = d * scale;
    m = Math.max(m, sc[j]);
  }
  let l = 0;
  for (let j = 0; j <= t; j++) l += Math.exp(sc[j] - m);
  const p = sc.map((x) => Math.exp(x - m) / l);
  return { p, lse: m + Math.log(l), g };
}

export function attentionForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  s: AttentionShape,
): { out: Float64Array; lse: Float64Array } {
  const out = new Float64Array(s.B * s.T * s.H * s.dv);
  const lse = new Float64Array(s.B * s.H * s.T);
  for (let b = 0; b < s.B; b++)
    for (let h = 0; h < s.H; h++)
      for (let t = 0; t < s.T; t++) {
        const { p, lse: z, g } = probs(q, k, s, b, t, h);
        lse[(b * s.H + h) * s.T + t] = z;
        const oo = oIdx(s, b, t, h);
        for (let j = 0; j <= t; j++) {
          const vo = vIdx(s, b, j, g);
          for (let c = 0; c < s.dv; c++) out[oo + c] += p[j] * v[vo + c];
        }
      }
  return { out, lse };
}

/** Gradients of Σ dout ∘ out with respect to q, k, v. */
export function attentionBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  dout: ArrayLike<number>,
  s: AttentionShape,
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const dq = new Float64Array(q.length);
  const dk = new Float64Array(k.length);
  const dv = new Float64Array(v.length);
  const scale = 1 / Math.sqrt(s.dk);
  for (let b = 0; b < s.B; b++)
    for (let h = 0; h < s.H; h++)
      for (let t = 0; t < s.T; t++) {
        const { p, g } = probs(q, k, s, b, t, h);
        const qo = qIdx(s, b, t, h);
        const oo = oIdx(s, b, t, h);
        // dP_j = dout_t · v_j ; dS_j = P_j (dP_j − Σ_i P_i dP_i)
        const dp = new Float64Array(t + 1);
        let delta = 0;
        for (let j = 0; j <= t; j++) {
          const vo = vIdx(s, b, j, g);
          for (let c = 0; c < s.dv; c++) dp[j] += dout[oo + c] * v[vo + c];
          delta += p[j] * dp[j];
        }
        for (let j = 0; j <= t; j++) {
          const ds = p[j] * (dp[j] - delta) * scale;
          const ko = kIdx(s, b, j, g);
          const vo = vIdx(s, b, j, g);
          for (let c = 0; c < s.dk; c++) {
            dq[qo + c] += ds * k[ko + c];
            dk[ko + c] += ds * q[qo + c];
          }
          for (let c = 0; c < s.dv; c++) dv[vo + c] += p[j] * dout[oo + c];
        }
      }
  return { dq, dk, dv };
}
