// NSA branch attention on the GPU vs the float64 reference for the group shapes of docs/nsa-spec.md:
// one group (all heads share one K/V, h = H), one head per group (h = 1), and dk = dv; both
// kernel variants (group, simple).
// Tolerances (f32 vs f64 relative RMS): forward ≤ 1e-5, backward ≤ 1e-4.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import type { NsaAttnShape, NsaAttnVariant, NsaBranch } from '../../src/kernels/nsa-attention';
import { getGpu } from '../helpers/gpu';
import { BRANCH_VARIANTS, expectMatches, randomBranchInputs, referenceBranch, runBranch } from './attention-harness';

const CFG: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 9, phi: 'avg', forceInit: true, forceLocal: 1 };

const SHAPES: Array<[string, NsaAttnShape]> = [
  ['one group: H=3, G=1, dk=5, dv=3', { B: 2, T: 31, H: 3, G: 1, dk: 5, dv: 3 }],
  ['one head per group and dk = dv: H=G=2, dk=dv=8', { B: 1, T: 38, H: 2, G: 2, dk: 8, dv: 8 }],
];

describe('NSA branch attention group shapes', () => {
  it.each(
    SHAPES.flatMap(([name, s]) => BRANCH_VARIANTS.map(([b, v]) => [b, v, name, s] as [NsaBranch, NsaAttnVariant, string, NsaAttnShape])),
  )('%s, %s, %s (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)', async (branch, variant, _name, s) => {
    const gpu = await getGpu();
    const x = randomBranchInputs(s, CFG, branch, s.T + s.H, 1.5);
    const [g] = await runBranch(gpu, s, CFG, branch, x, { variant });
    expectMatches(g, referenceBranch(s, CFG, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});
