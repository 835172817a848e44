// NSA branch attention on the GPU: the group variant's tiling paths at small head dims (several
// lane-merge rounds in the forward and in dQ; two threads per key in dK/dV), and the 16 KiB
// workgroup-memory budget of every tiling. Model head dims run in attention-wide.test.ts.
// Tolerances (f32 vs f64 relative RMS): forward ≤ 1e-5, backward ≤ 1e-4.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import { type NsaAttnShape, type NsaBranch, nsaKeyTiling, nsaRowTiling, nsaRowTilingOrNull } from '../../src/kernels/nsa-attention';
import { getGpu } from '../helpers/gpu';
import { expectMatches, randomBranchInputs, referenceBranch, runBranch } from './attention-harness';

const CFG: NsaConfig = { l: 4, d: 2, lSel: 16, nSel: 3, w: 40, phi: 'avg', forceInit: true, forceLocal: 1 };
const ROUNDS_O: NsaAttnShape = { B: 1, T: 45, H: 4, G: 2, dk: 4, dv: 12 };
const ROUNDS_Q: NsaAttnShape = { B: 1, T: 45, H: 4, G: 2, dk: 12, dv: 4 };
const NS2: NsaAttnShape = { B: 2, T: 41, H: 4, G: 2, dk: 33, dv: 4 };

/** Workgroup bytes of the query-centric kernels and of the dK/dV kernel, from their declarations. */
function rowBytes(h: number, dk: number, dv: number, nSel: number): number {
  const t = nsaRowTiling(h, dk, dv, nSel);
  return 16 * t.BK * (t.KS + t.VS) + 4 * t.NSEL + 4;
}
function keyBytes(dk: number, dv: number, branch: NsaBranch, lSel: number): number {
  const t = nsaKeyTiling(dk, dv, branch, lSel);
  return 16 * t.BQ * t.NS * (t.KC4 + t.VC4) + 12 * t.BQ + (t.NS > 1 ? 8 * t.BQ * t.WG : 8) + 8;
}

describe('NSA branch attention tiling', () => {
  it('every tiling fits 16 KiB and 256 threads; the test shapes take every path', () => {
    for (const h of [1, 3, 6, 16, 64]) {
      for (const [dk, dv] of [
        [1, 1],
        [5, 3],
        [64, 64],
        [72, 8],
        [128, 128],
        [128, 1],
      ]) {
        for (const nSel of [1, 16, 100])
          expect(rowBytes(h, dk, dv, nSel), `h=${h} dk=${dk} dv=${dv} nSel=${nSel}`).toBeLessThanOrEqual(16384);
        for (const lSel of [1, 8, 64]) {
          expect(keyBytes(dk, dv, 'sel', lSel), `dk=${dk} dv=${dv} lSel=${lSel}`).toBeLessThanOrEqual(16384);
          expect(nsaKeyTiling(dk, dv, 'sel', lSel).WG).toBeLessThanOrEqual(256);
        }
        expect(keyBytes(dk, dv, 'win', 64)).toBeLessThanOrEqual(16384);
      }
    }
    const o = nsaRowTiling(2, ROUNDS_O.dk, ROUNDS_O.dv, CFG.nSel);
    expect(o.CWo).toBeLessThan(o.DV4);
    const q = nsaRowTiling(2, ROUNDS_Q.dk, ROUNDS_Q.dv, CFG.nSel);
    expect(q.CWq).toBeLessThan(q.DK4);
    expect(nsaKeyTiling(NS2.dk, NS2.dv, 'sel', CFG.lSel).NS).toBe(2);
    expect(nsaKeyTiling(NS2.dk, NS2.dv, 'win', CFG.lSel).NS).toBe(2);
    // DSA's top-k as NSA's selection: staged up to 2,048 entries at head dim 64; past it no tiling.
    expect(nsaRowTilingOrNull(6, 64, 64, 2048)).toMatchObject({ NSEL: 2048 });
    expect(nsaRowTilingOrNull(6, 64, 64, 2559)).toBeNull();
  });

  // DSA's sparse phase runs the selected branch over top-k tokens (l = d = lSel = 1): at T = 16,384 the
  // bench's top-k is 2,559, a row too long to stage beside a key tile; the H200 run of 2026-11-28
  // refused it ("no room for a key tile in 16 KiB"). Forward and dQ now take the simple kernels.
  it('sel, a selection row too long to stage (2,049 tokens): forward and dQ simple, dK/dV group; rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4', async () => {
    const gpu = await getGpu();
    const cfg: NsaConfig = { l: 1, d: 1, lSel: 1, nSel: 2049, w: 1, phi: 'avg', forceInit: false, forceLocal: 0 };
    const s: NsaAttnShape = { B: 1, T: 2100, H: 1, G: 1, dk: 4, dv: 4 };
    expect(nsaRowTilingOrNull(s.H / s.G, s.dk, s.dv, cfg.nSel)).toBeNull();
    const x = randomBranchInputs(s, cfg, 'sel', 11);
    const [g] = await runBranch(gpu, s, cfg, 'sel', x, { variant: 'group', count: true });
    expectMatches(g, referenceBranch(s, cfg, 'sel', x));
    expect(gpu.reports).toEqual([]);
  });

  it.each([
    ['win', 'forward merge rounds', ROUNDS_O],
    ['cmp', 'dQ merge rounds', ROUNDS_Q],
    ['win', 'two threads per key', NS2],
    ['sel', 'two threads per key', NS2],
  ] as Array<[NsaBranch, string, NsaAttnShape]>)('%s, %s: %o (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)', async (branch, _n, s) => {
    const gpu = await getGpu();
    const x = randomBranchInputs(s, CFG, branch, s.dk + s.T, 1.5);
    const [g] = await runBranch(gpu, s, CFG, branch, x, { variant: 'group' });
    expectMatches(g, referenceBranch(s, CFG, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});
