// NSA branch attention on the GPU at model head dims, vs the float64 reference. Group variant:
// dk = dv = 64 (the bench shape's GQA with several key tiles, lane-merge rounds and two threads per
// key in dK/dV; cmp and win share these pipelines, sel at two threads per key runs in
// attention-dims.test.ts) and dk = 72 (four threads per key). Simple variant: every branch at
// dk = dv = 64, and the largest head dims (128). Large tiles compile slowly on SwiftShader: few
// shapes, small T.
// Tolerances (f32 vs f64 relative RMS): forward ≤ 1e-5, backward ≤ 1e-4.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import {
  NSA_ATTN_MAX_HEAD_DIM,
  type NsaAttnShape,
  type NsaAttnVariant,
  type NsaBranch,
  nsaKeyTiling,
  nsaRowTiling,
} from '../../src/kernels/nsa-attention';
import { getGpu } from '../helpers/gpu';
import { expectMatches, randomBranchInputs, referenceBranch, runBranch } from './attention-harness';

const CFG: NsaConfig = { l: 4, d: 2, lSel: 16, nSel: 3, w: 40, phi: 'avg', forceInit: true, forceLocal: 1 };
const WIDE: NsaAttnShape = { B: 1, T: 50, H: 4, G: 2, dk: 64, dv: 64 };
const NS4: NsaAttnShape = { B: 1, T: 30, H: 4, G: 1, dk: 72, dv: 8 };
const MAX: NsaAttnShape = { B: 1, T: 21, H: 2, G: 1, dk: NSA_ATTN_MAX_HEAD_DIM, dv: NSA_ATTN_MAX_HEAD_DIM };

describe('NSA branch attention at model head dims', () => {
  it('the shapes take the wide paths', () => {
    const t = nsaRowTiling(WIDE.H / WIDE.G, WIDE.dk, WIDE.dv, CFG.nSel);
    expect(t.BK).toBeLessThan(CFG.w);
    expect(t.CWo).toBeLessThan(t.DV4);
    expect(nsaKeyTiling(WIDE.dk, WIDE.dv, 'win', CFG.lSel).NS).toBe(2);
    expect(nsaKeyTiling(NS4.dk, NS4.dv, 'win', CFG.lSel).NS).toBe(4);
  });

  it.each([
    ['win', 'group', WIDE],
    ['cmp', 'group', WIDE],
    ['win', 'group', NS4],
    ['cmp', 'simple', WIDE],
    ['sel', 'simple', WIDE],
    ['win', 'simple', WIDE],
    ['sel', 'simple', MAX],
  ] as Array<[NsaBranch, NsaAttnVariant, NsaAttnShape]>)('%s, %s at %o (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)', async (branch, variant, s) => {
    const gpu = await getGpu();
    const x = randomBranchInputs(s, CFG, branch, s.dk + s.T, 1.5);
    const [g] = await runBranch(gpu, s, CFG, branch, x, { variant });
    expectMatches(g, referenceBranch(s, CFG, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});
