// NSA numerics as attention sharpens (docs/nsa-spec.md property 4 and "Top-n selection"): the
// queries are scaled so that the largest |q·k/√dk| of the compressed branch is 1 … 1e4, and at each
// magnitude the GPU's group scores P must still sum to the heads per group (≤ 1e-6 relative), its
// selection must equal the float64 reference's wherever the reference has no near-tie, its
// forward must match the reference, and (up to 1e3) the compressed branch's gradients too.
// Exact ties between equal scores (one-hot heads on different blocks, mirrored heads) must go to
// the lower block at any magnitude, as in the reference.
import { describe, expect, it } from 'vitest';

import { forcedBlocks, numSelBlocks, visibleCmpBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { NsaOp, type NsaOpInputs } from '../../src/model/nsa/op';
import { nsaBackwardRef, type NsaForward, nsaForwardRef } from '../../src/reference/nsa/layer';
import { expectClose, randn, relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { f32, randomInputs } from './op-harness';

// The kernel constants of op.test.ts (H/G = 2, dk = 5, dv = 3, nSel = 3): its pipelines are reused.
const SHAPE: AttentionShape = { B: 1, T: 40, H: 4, G: 2, dk: 5, dv: 3 };
const CFG: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: false, forceLocal: 1 };
const SEQ: NsaShape = { T: SHAPE.T, H: SHAPE.H, G: SHAPE.G, dk: SHAPE.dk, dv: SHAPE.dv };
const MAGNITUDES = [1, 10, 100, 1e3, 1e4];

/** Largest |q·kc/√dk| over the (query, visible compressed block) pairs of each head's group. */
function maxCmpScore(x: NsaOpInputs, fwd: NsaForward): number {
  const { T, H, G, dk } = SEQ;
  const h = H / G;
  let m = 0;
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < H; i++) {
      for (let k = 0; k < visibleCmpBlocks(t, CFG); k++) {
        let s = 0;
        for (let c = 0; c < dk; c++) s += x.q[(t * H + i) * dk + c] * fwd.kc[(k * G + Math.floor(i / h)) * dk + c];
        m = Math.max(m, Math.abs(s) / Math.sqrt(dk));
      }
    }
  }
  return m;
}

/** Inputs whose compressed scores reach exactly `magnitude` at most (q scaled, rounded to f32). */
function scaledInputs(magnitude: number, seed: number, gates?: [number, number, number]): NsaOpInputs {
  const x = randomInputs(SHAPE, seed);
  const m = maxCmpScore(x, nsaForwardRef(x, SEQ, CFG));
  const q = f32(Array.from(x.q, (v) => (v * magnitude) / m));
  const g = gates ? Float32Array.from({ length: x.gates.length }, (_, n) => gates[n % 3]) : x.gates;
  return { ...x, q, gates: g };
}

/**
 * Rows (t, g) whose float64 selection is decided by a margin: the last chosen and the first
 * unchosen free candidate differ by more than `gap`, or are exactly equal (then both sides break
 * the tie towards the lower block). Elsewhere f32 may legitimately choose otherwise.
 */
function decidedRows(P: Float64Array, gap: number): boolean[] {
  const nB = numSelBlocks(SEQ.T, CFG);
  const rows: boolean[] = [];
  for (let t = 0; t < SEQ.T; t++) {
    const nb = Math.floor(t / CFG.lSel) + 1;
    const forced = forcedBlocks(t, CFG);
    const rem = Math.min(CFG.nSel, nb) - forced.length;
    for (let g = 0; g < SEQ.G; g++) {
      const v = Array.from({ length: nb }, (_, j) => j)
        .filter((j) => !forced.includes(j))
        .map((j) => P[(t * SEQ.G + g) * nB + j])
        .sort((a, b) => b - a);
      const open = rem > 0 && rem < v.length;
      rows.push(!open || v[rem - 1] === v[rem] || v[rem - 1] - v[rem] > gap);
    }
  }
  return rows;
}

/** Worst |Σ_j P[t,g,j] / h − 1| over the rows that see a compressed block. */
function massError(P: Float32Array): number {
  const nB = numSelBlocks(SEQ.T, CFG);
  const h = SEQ.H / SEQ.G;
  let worst = 0;
  for (let t = 0; t < SEQ.T; t++) {
    if (visibleCmpBlocks(t, CFG) === 0) continue;
    for (let g = 0; g < SEQ.G; g++) {
      let s = 0;
      for (let j = 0; j < nB; j++) s += P[(t * SEQ.G + g) * nB + j];
      worst = Math.max(worst, Math.abs(s / h - 1));
    }
  }
  return worst;
}

/** Rows of [T, H, ·] tensors whose (t, group) is in `keep`, flattened (a masked comparison). */
function keepRows(a: ArrayLike<number>, keep: boolean[], width: number): number[] {
  const h = SEQ.H / SEQ.G;
  const out: number[] = [];
  for (let t = 0; t < SEQ.T; t++) {
    for (let i = 0; i < SEQ.H; i++) {
      if (!keep[t * SEQ.G + Math.floor(i / h)]) continue;
      for (let c = 0; c < width; c++) out.push(a[(t * SEQ.H + i) * width + c]);
    }
  }
  return out;
}

describe('selection scores and the compressed branch at large |q·k/√dk|', () => {
  it('magnitude sweep 1 … 1e4: Σ_j P = h to 1e-6, selection = reference where decided, forward parity', async () => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, SHAPE, CFG);
    const nB = numSelBlocks(SHAPE.T, CFG);
    try {
      for (const mag of MAGNITUDES) {
        const x = scaledInputs(mag, 77);
        const ref = nsaForwardRef(x, SEQ, CFG);
        const f = await op.forward(x);
        const P = await gpu.readF32(op.binding.saved.scores, SHAPE.T * SHAPE.G * nB);
        const err = massError(P);
        expect(err, `|scores| ≤ ${mag}: Σ_j P / h − 1 = ${err.toExponential(2)}`).toBeLessThanOrEqual(1e-6);
        expect(Array.from(P).every(Number.isFinite)).toBe(true);

        // Selection: equal to the reference on every row the reference decides by a margin.
        const keep = decidedRows(ref.scores, 1e-4);
        expect(keep.filter(Boolean).length, 'most rows are decided').toBeGreaterThan(0.75 * keep.length);
        for (let r = 0; r < keep.length; r++) {
          if (!keep[r]) continue;
          const row = (s: ArrayLike<number>) => Array.from(s).slice(r * CFG.nSel, (r + 1) * CFG.nSel);
          expect(row(f.selection), `|scores| ≤ ${mag}: selection of row ${r}`).toEqual(row(ref.selection));
        }

        // Forward: the compressed and window branches everywhere, the selected branch and the
        // mix on the rows with the reference's selection. f32 scores carry |s|·2⁻²⁴ of rounding,
        // which the softmax turns into that much relative error of the weights.
        const tol = Math.max(1e-5, mag * 2e-7);
        expectClose(`oCmp at ${mag}`, f.oCmp, ref.cmp.o, tol);
        expectClose(`oWin at ${mag}`, f.oWin, ref.win.o, tol);
        expectClose(`oSel at ${mag}`, keepRows(f.oSel, keep, SEQ.dv), keepRows(ref.sel.o, keep, SEQ.dv), tol);
        expectClose(`out at ${mag}`, keepRows(f.out, keep, SEQ.dv), keepRows(ref.o, keep, SEQ.dv), tol);
      }
    } finally {
      op.destroy();
    }
    expect(gpu.reports).toEqual([]);
  });

  it('compressed-branch gradients ≤ 1e-4 rel RMS up to |scores| = 1e3 (gates 1, 0, 0)', async () => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, SHAPE, CFG);
    try {
      for (const mag of MAGNITUDES.filter((m) => m <= 1e3)) {
        const x = scaledInputs(mag, 91, [1, 0, 0]);
        const ref = nsaForwardRef(x, SEQ, CFG);
        const dout = f32(randn(SHAPE.T * SHAPE.H * SHAPE.dv, rng(mag + 5)));
        const grads = nsaBackwardRef(x, SEQ, CFG, ref, dout);
        await op.forward(x);
        const g = await op.backward(dout);
        for (const [name, got, want] of [
          ['dq', g.dq, grads.dq],
          ['dkCmp', g.dkCmp, grads.dkCmp],
          ['dvCmp', g.dvCmp, grads.dvCmp],
        ] as const) {
          expectClose(`${name} at |scores| ≤ ${mag}`, got, want, 1e-4);
        }
      }
    } finally {
      op.destroy();
    }
    expect(gpu.reports).toEqual([]);
  });
});

describe('exact ties between equal selection scores go to the lower block at any magnitude', () => {
  // One compressed block per position and one selection block per position (l = d = lSel = 1),
  // T = 2: query 1 chooses one of blocks 0 and 1 (nSel = 1, nothing forced). Two heads, one group.
  const TIE_SHAPE: AttentionShape = { B: 1, T: 2, H: 2, G: 1, dk: 1, dv: 1 };
  const TIE_CFG: NsaConfig = { l: 1, d: 1, lSel: 1, nSel: 1, w: 1, phi: 'avg', forceInit: false, forceLocal: 0 };
  const TIE_SEQ: NsaShape = { T: 2, H: 2, G: 1, dk: 1, dv: 1 };

  /** q [T=2, H=2] and kCmp [T=2]; the rest fixed. */
  const tieInputs = (q: number[], kCmp: number[]): NsaOpInputs => ({
    q: f32(q),
    kCmp: f32(kCmp),
    vCmp: f32([0.5, -0.25]),
    kSel: f32([0.3, 0.7]),
    vSel: f32([1, 2]),
    kWin: f32([0.1, 0.2]),
    vWin: f32([3, 4]),
    gates: f32([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
  });

  const CASES: Array<[string, number[], number[]]> = [
    // The reported case: head 0 one-hot on block 1 (scores ~1e8), head 1 on block 0.
    ['issue repro (|s| ≈ 1e8)', [-2980.07, 22670.34, -25529.19, 33477.09], [-3540.64, -4943.66]],
    // One-hot heads on different blocks, the two heads' scores of different size.
    ...[100, 1e3, 1e4, 1e6].map((M): [string, number[], number[]] => [
      `one-hot heads, |s| ≈ ${M}`,
      [0, 0, 0.7371 * M, -1.3127 * M],
      [-0.8812, 1.1943],
    ]),
    // Mirrored heads (scores (x, −x) and (−x, x)): soft at small x, one-hot at large x.
    ...[0.3, 3, 30, 3e3].map((x): [string, number[], number[]] => [`mirrored heads, x = ${x}`, [0, 0, x, -x], [1, -1]]),
  ];

  it.each(CASES)('%s: P[1, 0] = P[1, 1], block 0 chosen, as the reference', async (_name, q, kCmp) => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, TIE_SHAPE, TIE_CFG);
    try {
      const x = tieInputs(q, kCmp);
      const ref = nsaForwardRef(x, TIE_SEQ, TIE_CFG);
      expect(ref.scores[2], 'the reference ties').toBe(ref.scores[3]);
      expect(ref.selection[1]).toBe(0);
      const f = await op.forward(x);
      const P = await gpu.readF32(op.binding.saved.scores, 4);
      expect(P[2], `P[1,·] = [${P[2]}, ${P[3]}]`).toBe(P[3]);
      expect(Math.abs(P[2] - ref.scores[2])).toBeLessThanOrEqual(1e-6);
      expect(Array.from(f.selection)).toEqual(Array.from(ref.selection));
      expect(relRms(f.oCmp, ref.cmp.o)).toBeLessThanOrEqual(1e-6);
    } finally {
      op.destroy();
    }
    expect(gpu.reports).toEqual([]);
  });
});
