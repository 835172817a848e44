// NSA branch attention on the GPU at model head dims: dk = dv = 64 (the bench shape's GQA with
// several key tiles, lane-merge rounds and two threads per key in dK/dV; cmp and win share these
// pipelines, sel at two threads per key runs in attention-dims.test.ts) and dk = 72 (four threads
// per key), vs the float64 reference. Large tiles compile slowly on SwiftShader: few shapes, small T.
// Tolerances (f32 vs f64 relative RMS): forward ≤ 1e-5, backward ≤ 1e-4.
import { describe, expect, it } from 'vitest';
import { nsaKeyTiling, nsaRowTiling, type NsaAttnShape, type NsaBranch } from '../../src/kernels/nsa-attention';
import type { NsaConfig } from '../../src/nsa/config';
import { getGpu } from '../helpers/gpu';
import { expectMatches, randomBranchInputs, referenceBranch, runBranch } from './attention-harness';

const CFG: NsaConfig = { l: 4, d: 2, lSel: 16, nSel: 3, w: 40, phi: 'avg', forceInit: true, forceLocal: 1 };
const WIDE: NsaAttnShape = { B: 1, T: 50, H: 4, G: 2, dk: 64, dv: 64 };
const NS4: NsaAttnShape = { B: 1, T: 30, H: 4, G: 1, dk: 72, dv: 8 };

describe('NSA branch attention at model head dims', () => {
  it('the shapes take the wide paths', () => {
    const t = nsaRowTiling(WIDE.H / WIDE.G, WIDE.dk, WIDE.dv, CFG.nSel);
    expect(t.BK).toBeLessThan(CFG.w);
    expect(t.CWo).toBeLessThan(t.DV4);
    expect(nsaKeyTiling(WIDE.dk, WIDE.dv, 'win', CFG.lSel).NS).toBe(2);
    expect(nsaKeyTiling(NS4.dk, NS4.dv, 'win', CFG.lSel).NS).toBe(4);
  });

  it.each([
    ['win', WIDE], ['cmp', WIDE], ['win', NS4],
  ] as Array<[NsaBranch, NsaAttnShape]>)('%s at %o (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)', async (branch, s) => {
    const gpu = await getGpu();
    const x = randomBranchInputs(s, CFG, branch, s.dk + s.T, 1.5);
    const [g] = await runBranch(gpu, s, CFG, branch, x);
    expectMatches(g, referenceBranch(s, CFG, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});
