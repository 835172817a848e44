// Gates g[t,i,c] = sigmoid(x_t·Wg[:, 3i+c] + bg[3i+c]), c ∈ (cmp, sel, win), the branch mix
// O = Σ_c g_c·O_c, and the ablations (force one branch, freeze the gates).

import { BRANCHES, type GateAblation } from '../../definitions/gates';

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** x [T,C], Wg [C,3H], bg [3H] → g [T,H,3] (= [T,3H], column 3i + c). */
export function gateForwardRef(
  x: ArrayLike<number>,
  Wg: ArrayLike<number>,
  bg: ArrayLike<number>,
  T: number,
  C: number,
  H: number,
): Float64Array {
  const n = 3 * H;
  const g = new Float64Array(T * n);
  for (let t = 0; t < T; t++) {
    for (let col = 0; col < n; col++) {
      let z = bg[col];
      for (let e = 0; e < C; e++) z += x[t * C + e] * Wg[e * n + col];
      g[t * n + col] = sigmoid(z);
    }
  }
  return g;
}

export interface GateGrads {
  dx: Float64Array;
  dWg: Float64Array;
  dbg: Float64Array;
}

/** Backward of gateForwardRef given its output g and dG [T,H,3]. */
export function gateBackwardRef(
  x: ArrayLike<number>,
  Wg: ArrayLike<number>,
  g: ArrayLike<number>,
  dG: ArrayLike<number>,
  T: number,
  C: number,
  H: number,
): GateGrads {
  const n = 3 * H;
  const dz = new Float64Array(T * n);
  for (let r = 0; r < T * n; r++) dz[r] = dG[r] * g[r] * (1 - g[r]);
  const dx = new Float64Array(T * C);
  const dWg = new Float64Array(C * n);
  const dbg = new Float64Array(n);
  for (let t = 0; t < T; t++) {
    for (let e = 0; e < C; e++) {
      let s = 0;
      for (let col = 0; col < n; col++) s += dz[t * n + col] * Wg[e * n + col];
      dx[t * C + e] = s;
    }
  }
  for (let e = 0; e < C; e++) {
    for (let col = 0; col < n; col++) {
      let s = 0;
      for (let t = 0; t < T; t++) s += x[t * C + e] * dz[t * n + col];
      dWg[e * n + col] = s;
    }
  }
  for (let col = 0; col < n; col++) {
    let s = 0;
    for (let t = 0; t < T; t++) s += dz[t * n + col];
    dbg[col] = s;
  }
  return { dx, dWg, dbg };
}

/** O[t,i] = g_cmp·O_cmp + g_sel·O_sel + g_win·O_win; branch outputs [T,H,dv], g [T,H,3]. */
export function combineRef(
  oCmp: ArrayLike<number>,
  oSel: ArrayLike<number>,
  oWin: ArrayLike<number>,
  g: ArrayLike<number>,
  T: number,
  H: number,
  dv: number,
): Float64Array {
  const o = new Float64Array(T * H * dv);
  for (let r = 0; r < T * H; r++) {
    for (let e = 0; e < dv; e++) {
      const x = r * dv + e;
      o[x] = g[3 * r] * oCmp[x] + g[3 * r + 1] * oSel[x] + g[3 * r + 2] * oWin[x];
    }
  }
  return o;
}

export interface CombineGrads {
  dOCmp: Float64Array;
  dOSel: Float64Array;
  dOWin: Float64Array;
  /** [T,H,3]. */
  dGates: Float64Array;
}

export function combineBackwardRef(
  dO: ArrayLike<number>,
  oCmp: ArrayLike<number>,
  oSel: ArrayLike<number>,
  oWin: ArrayLike<number>,
  g: ArrayLike<number>,
  T: number,
  H: number,
  dv: number,
): CombineGrads {
  const dOCmp = new Float64Array(T * H * dv);
  const dOSel = new Float64Array(T * H * dv);
  const dOWin = new Float64Array(T * H * dv);
  const dGates = new Float64Array(T * H * 3);
  const outs = [oCmp, oSel, oWin];
  const dOuts = [dOCmp, dOSel, dOWin];
  for (let r = 0; r < T * H; r++) {
    for (let b = 0; b < 3; b++) {
      let s = 0;
      for (let e = 0; e < dv; e++) {
        const x = r * dv + e;
        dOuts[b][x] = g[3 * r + b] * dO[x];
        s += dO[x] * outs[b][x];
      }
      dGates[3 * r + b] = s;
    }
  }
  return { dOCmp, dOSel, dOWin, dGates };
}

/** Gates [T,H,3] after the ablation (a copy). */
export function applyGateAblation(g: ArrayLike<number>, ab: GateAblation): Float64Array {
  const out = Float64Array.from(g);
  if (ab.kind === 'none') return out;
  const v: readonly number[] =
    ab.kind === 'force'
      ? BRANCHES.map((b) => (b === ab.branch ? 1 : 0))
      : typeof ab.value === 'number'
        ? [ab.value, ab.value, ab.value]
        : ab.value;
  for (let r = 0; r < out.length; r++) out[r] = v[r % 3];
  return out;
}

/** Gradient reaching the gate MLP: unchanged without ablation, 0 when gates are constants. */
export function gateAblationBackward(dGates: ArrayLike<number>, ab: GateAblation): Float64Array {
  return ab.kind === 'none' ? Float64Array.from(dGates) : new Float64Array(dGates.length);
}
