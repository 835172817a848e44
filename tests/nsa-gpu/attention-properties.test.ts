// NSA branch attention on the GPU, spec properties for both kernel variants: deterministic
// backward (bit-identical reruns), causality bit for bit (property 1), and the keys-read count of
// property 7 measured in the kernel. Also: the default variant follows the adapter.
import { describe, expect, it } from 'vitest';

import { visibleCmpBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import type { GpuContext } from '../../src/gpu/context';
import { type NsaAttnShape, nsaAttnVariant, nsaKeyRows } from '../../src/kernels/nsa-attention';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import {
  BRANCH_VARIANTS,
  BRANCHES,
  type BranchInputs,
  expectMatches,
  randomBranchInputs,
  randomSelection,
  referenceBranch,
  runBranch,
  sameBits,
  VARIANTS,
} from './attention-harness';

// Several key tiles per query (cmp: up to 33 keys, sel: 3·16, win: 40) and row tiles per key chunk.
const CFG: NsaConfig = { l: 4, d: 2, lSel: 16, nSel: 3, w: 40, phi: 'avg', forceInit: true, forceLocal: 1 };
const DIMS = { H: 4, G: 2, dk: 5, dv: 3 };

/** Elements of query positions [lo, hi) of a [B, T, rest] tensor. */
function positions(x: Float32Array, s: NsaAttnShape, rest: number, lo: number, hi: number): Float32Array {
  const out: number[] = [];
  for (let b = 0; b < s.B; b++) out.push(...x.subarray((b * s.T + lo) * rest, (b * s.T + hi) * rest));
  return new Float32Array(out);
}

/** Elements of query positions [lo, hi) of lse [B, H, T]. */
function lsePositions(x: Float32Array, s: NsaAttnShape, lo: number, hi: number): Float32Array {
  const out: number[] = [];
  for (let bh = 0; bh < s.B * s.H; bh++) out.push(...x.subarray(bh * s.T + lo, bh * s.T + hi));
  return new Float32Array(out);
}

describe('NSA branch attention properties', () => {
  it.each(BRANCH_VARIANTS)(
    '%s, %s: forward and backward are bit-identical on reruns (and match the reference)',
    async (branch, variant) => {
      const gpu = await getGpu();
      const s: NsaAttnShape = { B: 2, T: 70, ...DIMS };
      const x = randomBranchInputs(s, CFG, branch, 21);
      const [a, b] = await runBranch(gpu, s, CFG, branch, x, { reruns: 2, variant });
      expectMatches(a, referenceBranch(s, CFG, branch, x));
      for (const k of ['out', 'lse', 'dq', 'dk', 'dv'] as const) expect(sameBits(a[k], b[k]), k).toBe(true);
    },
  );

  it.each(BRANCH_VARIANTS)('%s, %s: perturbing position p leaves out, lse and dq at t < p bit-identical', async (branch, variant) => {
    const gpu = await getGpu();
    const s: NsaAttnShape = { B: 2, T: 45, ...DIMS };
    const p = 20;
    const x = randomBranchInputs(s, CFG, branch, 22);
    const y: BranchInputs = { q: x.q.slice(), k: x.k.slice(), v: x.v.slice(), dout: x.dout.slice(), sel: x.sel.slice() };
    const bumpRows = (a: Float32Array, rows: number, rest: number, from: number) => {
      for (let b = 0; b < s.B; b++) for (let r = from; r < rows; r++) for (let i = 0; i < rest; i++) a[(b * rows + r) * rest + i] += 0.5;
    };
    bumpRows(y.q, s.T, s.H * s.dk, p);
    bumpRows(y.dout, s.T, s.H * s.dv, p);
    // Keys at p and later: for cmp every compressed block that ends at or after p.
    const S = nsaKeyRows(branch, s.T, CFG);
    const firstKey = branch === 'cmp' ? Math.max(0, Math.ceil((p - CFG.l + 1) / CFG.d)) : p;
    bumpRows(y.k, S, s.G * s.dk, firstKey);
    bumpRows(y.v, S, s.G * s.dv, firstKey);
    // Another selection from p on.
    const other = randomSelection(s, CFG, rng(99));
    const row = s.G * CFG.nSel;
    for (let b = 0; b < s.B; b++) y.sel.set(other.subarray((b * s.T + p) * row, (b + 1) * s.T * row), (b * s.T + p) * row);

    const [a] = await runBranch(gpu, s, CFG, branch, x, { variant });
    const [c] = await runBranch(gpu, s, CFG, branch, y, { variant });
    expect(sameBits(positions(a.out, s, s.H * s.dv, 0, p), positions(c.out, s, s.H * s.dv, 0, p))).toBe(true);
    expect(sameBits(lsePositions(a.lse, s, 0, p), lsePositions(c.lse, s, 0, p))).toBe(true);
    expect(sameBits(positions(a.dq, s, s.H * s.dk, 0, p), positions(c.dq, s, s.H * s.dk, 0, p))).toBe(true);
    // The perturbation is seen from p on, so the checks above can fail.
    expect(sameBits(positions(a.out, s, s.H * s.dv, p, p + 1), positions(c.out, s, s.H * s.dv, p, p + 1))).toBe(false);
    expect(sameBits(positions(a.dq, s, s.H * s.dk, p, s.T), positions(c.dq, s, s.H * s.dk, p, s.T))).toBe(false);
  });

  it.each(VARIANTS)(
    '%s: keys read per (b, t, g), counted in the kernels, are ncmp(t) + |selected positions ≤ t| + min(w, t + 1)',
    async (variant) => {
      const gpu = await getGpu();
      const s: NsaAttnShape = { B: 2, T: 45, ...DIMS };
      const cfg = { ...CFG, w: 7 };
      const sel = randomBranchInputs(s, cfg, 'sel', 23).sel;
      const total = new Float64Array(s.B * s.T * s.G);
      for (const branch of BRANCHES) {
        const x = { ...randomBranchInputs(s, cfg, branch, 24), sel };
        const [counted] = await runBranch(gpu, s, cfg, branch, x, { count: true, variant });
        const [plain] = await runBranch(gpu, s, cfg, branch, x, { variant });
        expect(sameBits(counted.out, plain.out), 'the counting forward computes the same outputs').toBe(true);
        counted.keysRead.forEach((n, i) => (total[i] += n));
      }
      for (let b = 0; b < s.B; b++) {
        for (let t = 0; t < s.T; t++) {
          for (let g = 0; g < s.G; g++) {
            let selected = 0;
            for (let m = 0; m < cfg.nSel; m++) {
              const j = sel[((b * s.T + t) * s.G + g) * cfg.nSel + m];
              if (j >= 0) selected += Math.min(cfg.lSel, t + 1 - j * cfg.lSel);
            }
            const expected = visibleCmpBlocks(t, cfg) + selected + Math.min(cfg.w, t + 1);
            expect(total[(b * s.T + t) * s.G + g], `b=${b} t=${t} g=${g}`).toBe(expected);
          }
        }
      }
    },
  );

  it('the default variant follows the adapter (simple on software, group on hardware); an explicit one wins', async () => {
    const gpu = await getGpu();
    const withSoftware = (software: boolean) => Object.create(gpu, { adapter: { value: { ...gpu.adapter, software } } }) as GpuContext;
    expect(nsaAttnVariant(withSoftware(true))).toBe('simple');
    expect(nsaAttnVariant(withSoftware(false))).toBe('group');
    expect(nsaAttnVariant(withSoftware(true), 'group')).toBe('group');
    expect(nsaAttnVariant(withSoftware(false), 'simple')).toBe('simple');
    // The dispatches without a variant run the adapter's default: bit-identical to asking for it.
    const s: NsaAttnShape = { B: 1, T: 30, ...DIMS };
    const x = randomBranchInputs(s, CFG, 'sel', 25);
    const [byDefault] = await runBranch(gpu, s, CFG, 'sel', x);
    const [explicit] = await runBranch(gpu, s, CFG, 'sel', x, { variant: nsaAttnVariant(gpu) });
    for (const k of ['out', 'lse', 'dq', 'dk', 'dv'] as const) expect(sameBits(byDefault[k], explicit[k]), k).toBe(true);
    // The variants round differently, so the check above tells them apart.
    const [other] = await runBranch(gpu, s, CFG, 'sel', x, { variant: nsaAttnVariant(gpu) === 'simple' ? 'group' : 'simple' });
    expect(sameBits(byDefault.dq, other.dq)).toBe(false);
  });
});
