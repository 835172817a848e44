// NSA branch attention on the GPU vs the float64 reference (src/reference/nsa/*), every branch and
// both kernel variants (group, simple), forward and backward, on random valid configs with T
// rarely a multiple of d or lSel.
// Tolerances (f32 vs f64 relative RMS): forward out and lse ≤ 1e-5, backward dq/dK/dV ≤ 1e-4.
import { describe, expect, it } from 'vitest';

import { type NsaConfig, validateNsaConfig } from '../../src/definitions/nsa-config';
import type { NsaAttnShape, NsaAttnVariant, NsaBranch } from '../../src/kernels/nsa-attention';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { BRANCH_VARIANTS, expectMatches, randomBranchInputs, referenceBranch, runBranch } from './attention-harness';

/**
 * A random valid config (seeded). nSel ∈ {3, 4} and lSel ∈ {8, 12} keep the number of distinct
 * pipelines (compiled slowly on SwiftShader) small; l, d, w and the forced blocks vary freely.
 */
function randomConfig(seed: number): NsaConfig {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const lSel = pick([8, 12]);
  const d = pick([1, 2, 3, 4].filter((x) => lSel % x === 0));
  const l = d * pick([1, 2, 3].filter((m) => d * m <= lSel));
  const c: NsaConfig = {
    l,
    d,
    lSel,
    nSel: pick([3, 4]),
    w: pick([1, 3, 7, 12]),
    phi: 'avg',
    forceInit: r() < 0.7,
    forceLocal: pick([0, 1, 2]),
  };
  expect(validateNsaConfig(c)).toEqual([]);
  return c;
}

const describeConfig = (c: NsaConfig) =>
  `l=${c.l} d=${c.d} lSel=${c.lSel} nSel=${c.nSel} w=${c.w} forceInit=${c.forceInit} forceLocal=${c.forceLocal}`;

const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const DIMS = { H: 4, G: 2, dk: 5, dv: 3 };

const CASES: Array<[string, NsaConfig, NsaAttnShape]> = [
  ['base, B=2, T=37', BASE, { B: 2, T: 37, ...DIMS }],
  ...[11, 23, 5, 8, 33].map((seed, i): [string, NsaConfig, NsaAttnShape] => {
    const c = randomConfig(seed);
    const s = { B: 1 + (i % 2), T: 29 + 8 * i, ...DIMS };
    return [`${describeConfig(c)}, B=${s.B}, T=${s.T}`, c, s];
  }),
];

describe('NSA branch attention vs the float64 reference', () => {
  it.each(
    CASES.flatMap(([name, c, s]) =>
      BRANCH_VARIANTS.map(([b, v]) => [b, v, name, c, s] as [NsaBranch, NsaAttnVariant, string, NsaConfig, NsaAttnShape]),
    ),
  )('%s, %s: %s (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)', async (branch, variant, _name, cfg, s) => {
    const gpu = await getGpu();
    const x = randomBranchInputs(s, cfg, branch, s.T * 7 + cfg.lSel, 1.5);
    const [g] = await runBranch(gpu, s, cfg, branch, x, { variant });
    expectMatches(g, referenceBranch(s, cfg, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});

// The group kernels' dK/dV per group (no head-parts scratch given): what runs where H = G, here
// with two heads per group so it still differs from the per-head split the model runs above.
describe('NSA branch attention, group kernels without the head split', () => {
  it.each(['cmp', 'sel', 'win'] as NsaBranch[])('%s: base, B=2, T=37', async (branch) => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 2, T: 37, ...DIMS };
    const x = randomBranchInputs(s, BASE, branch, 41, 1.5);
    const [g] = await runBranch(gpu, s, BASE, branch, x, { variant: 'group', headSplit: false });
    expectMatches(g, referenceBranch(s, BASE, branch, x));
    expect(gpu.reports).toEqual([]);
  });
});

// The head split with each key chunk's queries cut in pieces (what a GPU's compressed branch runs
// at batch 1: nsaQuerySplits), a part per (head, piece) added heads-then-pieces: cmp and win, with
// 3 pieces (some empty or one query long at these sizes) and with more pieces than some chunks' readers.
describe('NSA branch attention, group kernels with dK/dV split by head and query piece', () => {
  it.each([
    ['cmp', 3],
    ['win', 3],
    ['cmp', 40],
  ] as Array<[NsaBranch, number]>)('%s, %i pieces: base, B=2, T=37 (rel RMS bwd ≤ 1e-4)', async (branch, querySplits) => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 2, T: 37, ...DIMS };
    const x = randomBranchInputs(s, BASE, branch, 43, 1.5);
    const [g, again] = await runBranch(gpu, s, BASE, branch, x, { variant: 'group', querySplits, reruns: 2 });
    expectMatches(g, referenceBranch(s, BASE, branch, x));
    expect(new Uint32Array(again.dk.buffer)).toEqual(new Uint32Array(g.dk.buffer)); // same bits every run
    expect(new Uint32Array(again.dv.buffer)).toEqual(new Uint32Array(g.dv.buffer));
    expect(gpu.reports).toEqual([]);
  });
});

// sel's dK and dV with the group kernels: one pass (9 storage bindings, the default where the
// device allows them: SwiftShader and the H200 do) or two (one gradient each within WebGPU's
// portable 8, what a device with 8 runs). The two compute the same terms in the same order: the
// same bits, head split or not.
describe('NSA selected branch, group kernels: dK/dV in one pass = in two passes, bit for bit', () => {
  it.each([true, false])('head split %s: base, B=2, T=37', async (headSplit) => {
    const gpu = await getGpu();
    expect(gpu.limits.maxStorageBuffersPerShaderStage, 'this adapter cannot run the one-pass kernel').toBeGreaterThanOrEqual(9);
    const s: NsaAttnShape = { B: 2, T: 37, ...DIMS };
    const x = randomBranchInputs(s, BASE, 'sel', 47, 1.5);
    const [one] = await runBranch(gpu, s, BASE, 'sel', x, { variant: 'group', headSplit, selKeyPasses: 1 });
    const [two] = await runBranch(gpu, s, BASE, 'sel', x, { variant: 'group', headSplit, selKeyPasses: 2 });
    expectMatches(two, referenceBranch(s, BASE, 'sel', x));
    expect(new Uint32Array(one.dk.buffer)).toEqual(new Uint32Array(two.dk.buffer));
    expect(new Uint32Array(one.dv.buffer)).toEqual(new Uint32Array(two.dv.buffer));
    expect(gpu.reports).toEqual([]);
  });
});
