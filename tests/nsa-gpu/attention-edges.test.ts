// NSA branch attention on the GPU, edge cases of docs/nsa-spec.md: T < l (cmp exactly 0, lse −inf, no
// NaN), w = 1, w ≥ T and nSel ≥ blocks (full coverage: equal to dense causal attention),
// nSel = forceInit + forceLocal, gradQ accumulation (each for both kernel variants), and input
// validation.
// Tolerances (f32 vs f64 relative RMS): forward ≤ 1e-5, backward ≤ 1e-4.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import type { BufferSlice } from '../../src/gpu/arena';
import { type NsaAttnShape, type NsaBranch, nsaBranchBackwardDispatches, nsaBranchForwardDispatch } from '../../src/kernels/nsa-attention';
import { attentionBackwardRef, attentionForwardRef } from '../../src/reference/attention';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { BRANCHES, expectMatches, randomBranchInputs, referenceBranch, runBranch, VARIANTS } from './attention-harness';

const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const DIMS = { H: 4, G: 2, dk: 5, dv: 3 };

describe.each(VARIANTS)('NSA branch attention edge cases (%s kernels)', (variant) => {
  it.each(BRANCHES)('T < l: %s matches the reference; cmp is exactly 0 with lse −inf and no NaN', async (branch) => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 2, T: 3, ...DIMS };
    const x = randomBranchInputs(s, BASE, branch, 3);
    const [g] = await runBranch(gpu, s, BASE, branch, x, { variant });
    expectMatches(g, referenceBranch(s, BASE, branch, x));
    if (branch === 'cmp') {
      expect(g.out.every((v) => v === 0 && !Object.is(v, -0))).toBe(true);
      expect(g.lse.every((v) => v === -Infinity)).toBe(true);
      expect(g.dq.every((v) => v === 0)).toBe(true);
      expect(g.dk.length + g.dv.length).toBe(0);
    }
    for (const a of [g.out, g.lse, g.dq, g.dk, g.dv]) expect(a.some(Number.isNaN)).toBe(false);
  });

  it('cmp with T ≥ l: queries t < l − 1 are exactly 0 with lse −inf, the others are not', async () => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 1, T: 9, ...DIMS };
    const x = randomBranchInputs(s, BASE, 'cmp', 4);
    const [g] = await runBranch(gpu, s, BASE, 'cmp', x, { variant });
    for (let t = 0; t < s.T; t++) {
      const row = g.out.subarray(t * s.H * s.dv, (t + 1) * s.H * s.dv);
      const empty = t < BASE.l - 1;
      expect(
        row.every((v) => v === 0),
        `t=${t}`,
      ).toBe(empty);
      for (let h = 0; h < s.H; h++) expect(g.lse[h * s.T + t] === -Infinity, `t=${t}`).toBe(empty);
    }
  });

  it('w = 1: each query returns its own value row exactly (p = 1)', async () => {
    const gpu = await getGpu();
    const cfg = { ...BASE, w: 1 };
    const s: NsaAttnShape = { B: 2, T: 23, ...DIMS };
    const x = randomBranchInputs(s, cfg, 'win', 5);
    const [g] = await runBranch(gpu, s, cfg, 'win', x, { variant });
    expectMatches(g, referenceBranch(s, cfg, 'win', x));
    const h = s.H / s.G;
    for (let r = 0; r < s.B * s.T; r++) {
      for (let i = 0; i < s.H; i++) {
        for (let c = 0; c < s.dv; c++) expect(g.out[(r * s.H + i) * s.dv + c]).toBe(x.v[(r * s.G + Math.floor(i / h)) * s.dv + c]);
      }
    }
  });

  // Full coverage (spec property 2): the branch equals dense causal attention on its keys.
  it.each([
    ['win', 'w ≥ T', { ...BASE, w: 40 }],
    ['sel', 'nSel ≥ blocks', { ...BASE, nSel: 6, forceLocal: 2 }],
  ] as Array<[NsaBranch, string, NsaConfig]>)(
    '%s with %s equals dense causal attention (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)',
    async (branch, _n, cfg) => {
      const gpu = await getGpu();
      const s: NsaAttnShape = { B: 2, T: 33, ...DIMS };
      const x = randomBranchInputs(s, cfg, branch, 6);
      const [g] = await runBranch(gpu, s, cfg, branch, x, { variant });
      const dense = attentionForwardRef(x.q, x.k, x.v, s);
      const grad = attentionBackwardRef(x.q, x.k, x.v, x.dout, s);
      expectClose('out', g.out, dense.out, 1e-5);
      expectClose('lse', g.lse, dense.lse, 1e-5);
      expectClose('dq', g.dq, grad.dq, 1e-4);
      expectClose('dK', g.dk, grad.dk, 1e-4);
      expectClose('dV', g.dv, grad.dv, 1e-4);
    },
  );

  it('sel with nSel = forceInit + forceLocal (only forced blocks) matches the reference', async () => {
    const gpu = await getGpu();
    const cfg = { ...BASE, nSel: 3, forceLocal: 2 };
    const s: NsaAttnShape = { B: 1, T: 41, ...DIMS };
    const x = randomBranchInputs(s, cfg, 'sel', 7);
    const [g] = await runBranch(gpu, s, cfg, 'sel', x, { variant });
    expectMatches(g, referenceBranch(s, cfg, 'sel', x));
  });

  it.each(BRANCHES)('%s: accumulateQ adds dq into gradQ (rel RMS ≤ 1e-4); dK/dV still overwrite', async (branch) => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 1, T: 26, ...DIMS };
    const x = randomBranchInputs(s, BASE, branch, 8);
    const init = new Float32Array(randn(s.T * s.H * s.dk, rng(9)));
    const [g] = await runBranch(gpu, s, BASE, branch, x, { accumulateQ: true, gradQInit: init, variant });
    const ref = referenceBranch(s, BASE, branch, x);
    expectClose(
      'gradQ',
      g.dq,
      ref.dq.map((v, i) => v + init[i]),
      1e-4,
    );
    expectClose('dK', g.dk, ref.dk, 1e-4);
    expectClose('dV', g.dv, ref.dv, 1e-4);
  });
});

describe('NSA branch attention input validation', () => {
  it('rejects bad shapes, configs and missing or short slices, naming them, before any GPU work', async () => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 1, T: 10, ...DIMS };
    const big = (): BufferSlice => ({ buffer: undefined as unknown as GPUBuffer, offset: 0, size: 1 << 16 });
    const fwd = { ...s, cfg: BASE, q: big(), k: big(), v: big(), out: big(), lse: big() };
    const bwd = { ...fwd, dout: big(), delta: big(), gradQ: big(), gradK: big(), gradV: big(), accumulateQ: false };
    const created = gpu.counters.buffersCreated;
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'win', cfg: { ...BASE, d: 3 } })).rejects.toThrow(/nsa\.d/);
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'win', H: 3 })).rejects.toThrow(/shape\.H/);
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'win', dk: 129 })).rejects.toThrow(/dk = 129/);
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'win', T: 0 })).rejects.toThrow(/T = 0/);
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'sel' })).rejects.toThrow(/sel is required/);
    await expect(nsaBranchForwardDispatch(gpu, { ...fwd, branch: 'cmp', lse: { ...big(), size: 8 } })).rejects.toThrow(/lse holds 8 bytes/);
    await expect(nsaBranchBackwardDispatches(gpu, { ...bwd, branch: 'sel', sel: big() })).rejects.toThrow(/reverse\.queries is required/);
    await expect(nsaBranchBackwardDispatches(gpu, { ...bwd, branch: 'win', gradV: { ...big(), size: 4 } })).rejects.toThrow(
      /gradV holds 4/,
    );
    expect(gpu.counters.buffersCreated).toBe(created);
  });
});
