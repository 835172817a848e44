// Shared fixtures of the NSA op tests: random inputs without selection near-ties, the float64
// layer reference per sequence, and one end-to-end check of forward and backward.
import { expect } from 'vitest';

import { forcedBlocks, numSelBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { NsaOp, type NsaOpInputs } from '../../src/model/nsa/op';
import { nsaBackwardRef, type NsaForward, nsaForwardRef, type NsaGrads } from '../../src/reference/nsa/layer';
import { attentionGradFloor, expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

export interface Case {
  name: string;
  shape: AttentionShape;
  cfg: NsaConfig;
}

export const f32 = (a: ArrayLike<number>) => new Float32Array(a);

export function randomInputs(s: AttentionShape, seed: number): NsaOpInputs {
  const r = rng(seed);
  const N = s.B * s.T;
  return {
    q: f32(randn(N * s.H * s.dk, r, 1.5)),
    kCmp: f32(randn(N * s.G * s.dk, r)),
    vCmp: f32(randn(N * s.G * s.dv, r)),
    kSel: f32(randn(N * s.G * s.dk, r)),
    vSel: f32(randn(N * s.G * s.dv, r)),
    kWin: f32(randn(N * s.G * s.dk, r)),
    vWin: f32(randn(N * s.G * s.dv, r)),
    gates: Float32Array.from({ length: N * s.H * 3 }, () => r()),
  };
}

/** Smallest gap between the last chosen and first unchosen free candidate (exact ties skipped). */
function boundaryGap(P: ArrayLike<number>, s: NsaShape, c: NsaConfig): number {
  const nB = numSelBlocks(s.T, c);
  let gap = Infinity;
  for (let t = 0; t < s.T; t++) {
    const nb = Math.floor(t / c.lSel) + 1;
    const forced = forcedBlocks(t, c);
    const rem = Math.min(c.nSel, nb) - forced.length;
    for (let g = 0; g < s.G; g++) {
      const v = Array.from({ length: nb }, (_, j) => j)
        .filter((j) => !forced.includes(j))
        .map((j) => P[(t * s.G + g) * nB + j]);
      v.sort((a, b) => b - a);
      if (rem > 0 && rem < v.length && v[rem - 1] !== v[rem]) gap = Math.min(gap, v[rem - 1] - v[rem]);
    }
  }
  return gap;
}

interface RefRun {
  fwd: NsaForward[];
  grads: NsaGrads[];
}

/** The float64 reference, sequence by sequence. */
function reference(s: AttentionShape, cfg: NsaConfig, x: NsaOpInputs, dout?: Float32Array): RefRun {
  const seq: NsaShape = { T: s.T, H: s.H, G: s.G, dk: s.dk, dv: s.dv };
  const part = (a: Float32Array, b: number) => {
    const n = a.length / s.B;
    return new Float64Array(a.subarray(b * n, (b + 1) * n));
  };
  const run: RefRun = { fwd: [], grads: [] };
  for (let b = 0; b < s.B; b++) {
    const inp = {
      q: part(x.q, b),
      kCmp: part(x.kCmp, b),
      vCmp: part(x.vCmp, b),
      kSel: part(x.kSel, b),
      vSel: part(x.vSel, b),
      kWin: part(x.kWin, b),
      vWin: part(x.vWin, b),
      gates: part(x.gates, b),
    };
    const fwd = nsaForwardRef(inp, seq, cfg);
    run.fwd.push(fwd);
    if (dout) run.grads.push(nsaBackwardRef(inp, seq, cfg, fwd, part(dout, b)));
  }
  return run;
}

/** Inputs whose float64 selection has no boundary within `minGap` (next seed otherwise). */
function inputsWithoutNearTies(s: AttentionShape, cfg: NsaConfig, seed: number, minGap = 1e-4): { x: NsaOpInputs; ref: RefRun } {
  for (let k = 0; k < 50; k++) {
    const x = randomInputs(s, seed + 1000 * k);
    const ref = reference(s, cfg, x);
    if (ref.fwd.every((f) => boundaryGap(f.scores, s, cfg) > minGap)) return { x, ref };
  }
  throw new Error('no tie-free inputs in 50 seeds');
}

const cat = <T extends Float64Array | Int32Array>(parts: T[], make: (n: number) => T): T => {
  const out = make(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const catF = (parts: Float64Array[]) => cat(parts, (n) => new Float64Array(n));

/** Forward (out, selection, branch outputs) and backward (every input gradient) vs the reference. */
export async function checkCase(cs: Case, seed: number): Promise<void> {
  const gpu = await getGpu();
  const { shape: s, cfg } = cs;
  const { x, ref: refF } = inputsWithoutNearTies(s, cfg, seed);
  const dout = f32(randn(s.B * s.T * s.H * s.dv, rng(seed + 7)));
  const ref = reference(s, cfg, x, dout);
  const op = await NsaOp.create(gpu, s, cfg);
  try {
    const f = await op.forward(x);
    expect(Array.from(f.selection)).toEqual(
      Array.from(
        cat(
          refF.fwd.map((r) => r.selection),
          (n) => new Int32Array(n),
        ),
      ),
    );
    expectClose('out', f.out, catF(ref.fwd.map((r) => r.o)), 1e-5);
    expectClose('oSel', f.oSel, catF(ref.fwd.map((r) => r.sel.o)), 1e-5);
    expectClose('oWin', f.oWin, catF(ref.fwd.map((r) => r.win.o)), 1e-5);
    if (s.T < cfg.l)
      expect(Array.from(f.oCmp).every((v) => v === 0)).toBe(true); // no block visible: exactly 0
    else expectClose('oCmp', f.oCmp, catF(ref.fwd.map((r) => r.cmp.o)), 1e-5);

    const g = await op.backward(dout);
    // Floors for gradients that cancel (w = 1: every window query has one key, dS = 0).
    const scale = 1 / Math.sqrt(s.dk);
    const rows = s.B * s.T * s.G;
    const qRows = s.B * s.T * s.H;
    const floor: Partial<Record<keyof typeof g, number>> = {
      dq: Math.max(
        ...[
          [x.vSel, x.kSel],
          [x.vWin, x.kWin],
          [x.vCmp, x.kCmp],
        ].map(([v, k]) => attentionGradFloor(scale, dout, v, rows, k, rows)),
      ),
      dkSel: attentionGradFloor(scale, dout, x.vSel, rows, x.q, qRows),
      dkWin: attentionGradFloor(scale, dout, x.vWin, rows, x.q, qRows),
    };
    for (const [k, rk] of [
      ['dq', 'dq'],
      ['dkSel', 'dkSel'],
      ['dvSel', 'dvSel'],
      ['dkWin', 'dkWin'],
      ['dvWin', 'dvWin'],
      ['dgates', 'dGates'],
    ] as const) {
      expectClose(k, g[k], catF(ref.grads.map((r) => r[rk])), 1e-4, floor[k]);
    }
    for (const k of ['dkCmp', 'dvCmp'] as const) {
      const want = catF(ref.grads.map((r) => r[k]));
      if (s.T < cfg.l)
        expect(Array.from(g[k]).every((v) => v === 0)).toBe(true); // no compressed block: no gradient
      else expectClose(k, g[k], want, 1e-4);
    }
  } finally {
    op.destroy();
  }
  expect(gpu.reports).toEqual([]);
}
