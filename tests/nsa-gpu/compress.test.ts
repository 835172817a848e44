// NSA compression φ = avg / mlp on the GPU vs the float64 reference (src/reference/nsa/compression.ts),
// batched over B sequences (the reference runs per sequence). Tolerances: f32 vs f64 relative RMS
// ≤ 1e-5 forward, ≤ 1e-4 backward.
import { describe, expect, it } from 'vitest';

import { numCmpBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { createArena } from '../../src/gpu/arena';
import {
  type CmpMlpSlices,
  compressAvgBackwardDispatch,
  compressAvgForwardDispatch,
  compressMlpBackwardDispatches,
  compressMlpForwardDispatches,
  compressMlpScratchLengths,
} from '../../src/kernels/nsa-compress';
import { type CmpMlpWeights, compressBackwardRef, compressRef } from '../../src/reference/nsa/compression';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a)); // f32-rounded, as f64

interface Case {
  name: string;
  cfg: NsaConfig;
  B: number;
  T: number;
  G: number;
  D: number;
}

const AVG_CASES: Case[] = [
  { name: 'T=37 (not a multiple of d), G=2, D=3', cfg: BASE, B: 2, T: 37, G: 2, D: 3 },
  { name: 'T < l (Ncmp = 0)', cfg: BASE, B: 2, T: 3, G: 2, D: 4 },
  { name: 'T = l (one block)', cfg: BASE, B: 1, T: 4, G: 1, D: 5 },
  { name: 'G = 1, d = 1, l = 3', cfg: { ...BASE, l: 3, d: 1, lSel: 6 }, B: 3, T: 23, G: 1, D: 4 },
  { name: 'l = d (no overlap)', cfg: { ...BASE, l: 4, d: 4, lSel: 4 }, B: 2, T: 26, G: 3, D: 2 },
  { name: 'paper-like l=32, d=16', cfg: { ...BASE, l: 32, d: 16, lSel: 64 }, B: 1, T: 100, G: 2, D: 8 },
];

/** Per-sequence slice b of a [B, n] array. */
const seq = (a: ArrayLike<number>, b: number, n: number) => Float64Array.from({ length: n }, (_, i) => a[b * n + i]);

describe('compression φ = avg', () => {
  it.each(AVG_CASES)('$name: forward ≤ 1e-5, backward ≤ 1e-4 (dx overwritten)', async ({ cfg, B, T, G, D }) => {
    const gpu = await getGpu();
    const N = numCmpBlocks(T, cfg);
    const r = rng(T * 131 + G * 7 + D);
    const nx = T * G * D;
    const nc = N * G * D;
    const x = F(randn(B * nx, r));
    const dout = F(randn(B * nc, r));
    const arena = createArena(gpu, 'cmp-avg', [
      { name: 'x', bytes: B * nx * 4 },
      { name: 'out', bytes: B * nc * 4 },
      { name: 'dout', bytes: B * nc * 4 },
      { name: 'dx', bytes: B * nx * 4 },
    ]);
    const s = (k: string) => arena.get(k);
    gpu.write(s('x'), new Float32Array(x));
    if (nc > 0) gpu.write(s('dout'), new Float32Array(dout));
    gpu.write(s('dx'), new Float32Array(randn(B * nx, r))); // garbage: must be overwritten
    const c = { ...cfg, phi: 'avg' as const };
    gpu.run([
      await compressAvgForwardDispatch(gpu, { x: s('x'), out: s('out'), B, T, G, D, cfg: c }),
      await compressAvgBackwardDispatch(gpu, { dout: s('dout'), dx: s('dx'), B, T, G, D, cfg: c }),
    ]);
    const out = new Float64Array(B * nc);
    const dx = new Float64Array(B * nx);
    for (let b = 0; b < B; b++) {
      const xb = seq(x, b, nx);
      const fwd = compressRef(xb, T, G, D, c);
      out.set(fwd.out, b * nc);
      dx.set(compressBackwardRef(xb, T, G, D, c, fwd, seq(dout, b, nc)).dX, b * nx);
    }
    if (nc > 0) expectClose('out', await gpu.readF32(s('out'), B * nc), out, 1e-5);
    const gdx = await gpu.readF32(s('dx'), B * nx);
    if (N === 0) expect(Array.from(gdx).every((v) => v === 0)).toBe(true);
    else expectClose('dx', gdx, dx, 1e-4);
    expect(gpu.reports).toEqual([]);
  });
});

// D and Dh are multiples of 4 so that every case reuses the same three matmul pipelines (NN, TN
// accumulate, NT with vec4 loads): each new matmul variant costs seconds of shader compilation on
// SwiftShader. Odd D is covered by the φ = avg cases (same index math) and the matmul tests.
const MLP_CASES: Array<Case & { Dh: number }> = [
  { name: 'keys T=30, G=2, D=8, Dh=4', cfg: BASE, B: 2, T: 30, G: 2, D: 8, Dh: 4 },
  { name: 'values T=31 (odd), G=2, D=4 (dk ≠ dv), Dh=8', cfg: BASE, B: 2, T: 31, G: 2, D: 4, Dh: 8 },
  { name: 'T < l (Ncmp = 0)', cfg: BASE, B: 2, T: 2, G: 2, D: 4, Dh: 4 },
  { name: 'G = 1, d = 1, l = 3', cfg: { ...BASE, l: 3, d: 1, lSel: 6 }, B: 1, T: 17, G: 1, D: 4, Dh: 4 },
  { name: 'l = d, B = 3', cfg: { ...BASE, l: 4, d: 4, lSel: 4 }, B: 3, T: 19, G: 2, D: 8, Dh: 8 },
];

const WEIGHT_NAMES = ['pos', 'w1', 'b1', 'w2', 'b2'] as const;

function randomMlp(D: number, Dh: number, l: number, r: () => number): CmpMlpWeights {
  return {
    dIn: D,
    dHidden: Dh,
    pos: F(randn(l * D, r, 0.5)),
    w1: F(randn(l * D * Dh, r, 1 / Math.sqrt(l * D))),
    b1: F(randn(Dh, r, 0.3)),
    w2: F(randn(Dh * D, r, 1 / Math.sqrt(Dh))),
    b2: F(randn(D, r, 0.3)),
  };
}

async function mlpSetup(cs: Case & { Dh: number }, seed: number) {
  const { cfg: c0, B, T, G, D, Dh } = cs;
  const cfg = { ...c0, phi: 'mlp' as const };
  const gpu = await getGpu();
  const N = numCmpBlocks(T, cfg);
  const r = rng(seed);
  const nx = T * G * D;
  const nc = N * G * D;
  const W = randomMlp(D, Dh, cfg.l, r);
  const x = F(randn(B * nx, r));
  const dout = F(randn(B * nc, r));
  const grad0 = Object.fromEntries(WEIGHT_NAMES.map((k) => [k, F(randn(W[k].length, r, 0.1))])) as Record<
    (typeof WEIGHT_NAMES)[number],
    Float64Array
  >;
  const scratchLen = compressMlpScratchLengths({ B, T, G, D, dHidden: Dh, cfg });
  const arena = createArena(gpu, 'cmp-mlp', [
    { name: 'x', bytes: B * nx * 4 },
    { name: 'out', bytes: B * nc * 4 },
    { name: 'dout', bytes: B * nc * 4 },
    { name: 'dx', bytes: B * nx * 4 },
    ...WEIGHT_NAMES.map((k) => ({ name: `w.${k}`, bytes: W[k].length * 4 })),
    ...WEIGHT_NAMES.map((k) => ({ name: `g.${k}`, bytes: W[k].length * 4 })),
    ...Object.entries(scratchLen).map(([k, n]) => ({ name: `s.${k}`, bytes: n * 4 })),
  ]);
  const s = (k: string) => arena.get(k);
  const slices = (p: string) => Object.fromEntries(WEIGHT_NAMES.map((k) => [k, s(`${p}.${k}`)])) as unknown as CmpMlpSlices;
  const scratch = Object.fromEntries(Object.keys(scratchLen).map((k) => [k, s(`s.${k}`)]));
  gpu.write(s('x'), new Float32Array(x));
  if (nc > 0) gpu.write(s('dout'), new Float32Array(dout));
  gpu.write(s('dx'), new Float32Array(randn(B * nx, r))); // garbage: must be overwritten
  for (const k of WEIGHT_NAMES) gpu.write(s(`w.${k}`), new Float32Array(W[k]));
  const writeGrads = () => {
    for (const k of WEIGHT_NAMES) gpu.write(s(`g.${k}`), new Float32Array(grad0[k]));
  };
  writeGrads();
  const dims = { B, T, G, D, dHidden: Dh, cfg };
  const fwd = await compressMlpForwardDispatches(gpu, { ...dims, x: s('x'), out: s('out'), weights: slices('w'), scratch });
  const bwd = await compressMlpBackwardDispatches(gpu, {
    ...dims,
    dout: s('dout'),
    x: s('x'),
    dx: s('dx'),
    weights: slices('w'),
    grads: slices('g'),
    scratch,
  });
  return { gpu, s, fwd, bwd, W, x, dout, grad0, cfg, N, nx, nc, writeGrads };
}

describe('compression φ = mlp', () => {
  it.each(MLP_CASES)('$name: forward ≤ 1e-5; dx and parameter grads (+=) ≤ 1e-4', async (cs) => {
    const { B, T, G, D } = cs;
    const { gpu, s, fwd, bwd, W, x, dout, grad0, cfg, N, nx, nc } = await mlpSetup(cs, T * 17 + D);
    if (N === 0) expect(fwd).toEqual([]);
    gpu.run([...fwd, ...bwd]);
    const out = new Float64Array(B * nc);
    const dx = new Float64Array(B * nx);
    const grads = Object.fromEntries(WEIGHT_NAMES.map((k) => [k, Float64Array.from(grad0[k])]));
    for (let b = 0; b < B; b++) {
      const xb = seq(x, b, nx);
      const f = compressRef(xb, T, G, D, cfg, W);
      out.set(f.out, b * nc);
      const g = compressBackwardRef(xb, T, G, D, cfg, f, seq(dout, b, nc), W);
      dx.set(g.dX, b * nx);
      if (N > 0) for (const k of WEIGHT_NAMES) g.dW![k].forEach((v, i) => (grads[k][i] += v));
    }
    const gdx = await gpu.readF32(s('dx'), B * nx);
    if (N === 0) {
      expect(Array.from(gdx).every((v) => v === 0)).toBe(true);
    } else {
      expectClose('out', await gpu.readF32(s('out'), B * nc), out, 1e-5);
      expectClose('dx', gdx, dx, 1e-4);
    }
    for (const k of WEIGHT_NAMES) {
      // Accumulation onto nonzero initial gradients (unchanged when there is no block).
      expectClose(`d${k}`, await gpu.readF32(s(`g.${k}`), W[k].length), grads[k], N === 0 ? 0 : 1e-4);
    }
    expect(gpu.reports).toEqual([]);
  });

  it('backward is bit-identical across runs', async () => {
    const { gpu, s, fwd, bwd, writeGrads } = await mlpSetup(MLP_CASES[1], 99);
    gpu.run(fwd);
    const runs: Uint32Array[][] = [];
    for (let k = 0; k < 2; k++) {
      writeGrads();
      gpu.run(bwd);
      runs.push(await Promise.all(['dx', ...WEIGHT_NAMES.map((n) => `g.${n}`)].map(async (n) => new Uint32Array(await gpu.read(s(n))))));
    }
    runs[0].forEach((a, i) => expect(runs[1][i]).toEqual(a));
  });

  it('rejects wrong sizes and invalid configs before any GPU work', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['x', 'o', 'p'].map((name) => ({ name, bytes: 64 })),
    );
    const [x, o] = ['x', 'o'].map((k) => arena.get(k));
    const a = { x, out: o, B: 1, T: 8, G: 1, D: 2, cfg: BASE };
    await expect(compressAvgForwardDispatch(gpu, { ...a, T: 9 })).rejects.toThrow(/x holds/);
    await expect(compressAvgForwardDispatch(gpu, { ...a, cfg: { ...BASE, d: 3 } })).rejects.toThrow(/nsa\.d/);
    await expect(compressAvgForwardDispatch(gpu, { ...a, out: x })).rejects.toThrow(/overlap/);
    await expect(compressAvgBackwardDispatch(gpu, { dout: o, dx: x, B: 1, T: 8, G: 0, D: 2, cfg: BASE })).rejects.toThrow(/G = 0/);
  });
});
