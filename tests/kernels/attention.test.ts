import { describe, expect, it } from 'vitest';

import { type AttentionShape } from '../../src/definitions/shapes';
import { type BufferSlice, createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { attentionBackwardDispatches, attentionForwardDispatch, attentionTiling } from '../../src/kernels/attention';
import { attentionBackwardRef, attentionForwardRef } from '../../src/reference/attention';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

interface Inputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dout: Float32Array;
}

interface Outputs {
  out: Float32Array;
  lse: Float32Array;
  delta: Float32Array;
  dq: Float32Array;
  dk: Float32Array;
  dv: Float32Array;
}

const sizes = (s: AttentionShape) => ({
  q: s.B * s.T * s.H * s.dk,
  k: s.B * s.T * s.G * s.dk,
  v: s.B * s.T * s.G * s.dv,
  out: s.B * s.T * s.H * s.dv,
  lse: s.B * s.H * s.T,
});

function randomInputs(s: AttentionShape, seed: number, qScale = 1): Inputs {
  const r = rng(seed);
  const n = sizes(s);
  return {
    q: new Float32Array(randn(n.q, r, qScale)),
    k: new Float32Array(randn(n.k, r)),
    v: new Float32Array(randn(n.v, r)),
    dout: new Float32Array(randn(n.out, r)),
  };
}

/** Runs forward then backward on the GPU. Outputs start as NaN: every element must be overwritten. */
async function runGpu(gpu: GpuContext, s: AttentionShape, x: Inputs, reruns = 1, headSplit = false): Promise<Outputs[]> {
  const n = sizes(s);
  const names = {
    q: n.q,
    k: n.k,
    v: n.v,
    dout: n.out,
    out: n.out,
    lse: n.lse,
    delta: n.lse,
    gradQ: n.q,
    gradK: n.k,
    gradV: n.v,
    partK: n.q,
    partV: n.out,
  };
  const arena = createArena(
    gpu,
    'attn',
    Object.entries(names).map(([name, f]) => ({ name, bytes: f * 4 })),
  );
  const sl = Object.fromEntries(Object.keys(names).map((k) => [k, arena.get(k)])) as Record<keyof typeof names, BufferSlice>;
  gpu.write(sl.q, x.q);
  gpu.write(sl.k, x.k);
  gpu.write(sl.v, x.v);
  gpu.write(sl.dout, x.dout);
  const fwd = await attentionForwardDispatch(gpu, { ...s, ...sl });
  const headParts = headSplit ? { k: sl.partK, v: sl.partV } : undefined;
  const bwd = await attentionBackwardDispatches(gpu, { ...s, ...sl, headParts });
  expect(bwd.length).toBe(headSplit && s.H > s.G ? 3 : 2);
  const results: Outputs[] = [];
  for (let i = 0; i < reruns; i++) {
    for (const k of ['out', 'lse', 'delta', 'gradQ', 'gradK', 'gradV'] as const) gpu.write(sl[k], new Float32Array(names[k]).fill(NaN));
    gpu.run([fwd, ...bwd]);
    results.push({
      out: await gpu.readF32(sl.out, n.out),
      lse: await gpu.readF32(sl.lse, n.lse),
      delta: await gpu.readF32(sl.delta, n.lse),
      dq: await gpu.readF32(sl.gradQ, n.q),
      dk: await gpu.readF32(sl.gradK, n.k),
      dv: await gpu.readF32(sl.gradV, n.v),
    });
  }
  for (const b of arena.buffers) b.destroy();
  return results;
}

const sameBits = (a: Float32Array, b: Float32Array) =>
  a.length === b.length &&
  new Uint32Array(a.buffer, a.byteOffset, a.length).every((w, i) => w === new Uint32Array(b.buffer, b.byteOffset, b.length)[i]);

/** Elements [lo, hi) of the position axis of a tensor laid out [B, T, rest]. */
function positions(x: Float32Array, s: AttentionShape, rest: number, lo: number, hi: number): Float32Array {
  const out: number[] = [];
  for (let b = 0; b < s.B; b++) out.push(...x.subarray((b * s.T + lo) * rest, (b * s.T + hi) * rest));
  return new Float32Array(out);
}

/** Elements [lo, hi) of the position axis of lse / delta, laid out [B, H, T]. */
function lsePositions(x: Float32Array, s: AttentionShape, lo: number, hi: number): Float32Array {
  const out: number[] = [];
  for (let bh = 0; bh < s.B * s.H; bh++) out.push(...x.subarray(bh * s.T + lo, bh * s.T + hi));
  return new Float32Array(out);
}

// Two head-dim pairs (each compiles three pipelines, which SwiftShader makes slow, ~3 s each):
// (5, 3) runs dK/dV with one thread per key; (36, 3) with NS = 2 threads per key, k's second slice
// half padding and v's second slice empty. NS = 4 (dk or dv > 64) differs only in that constant.
const SHAPES: [string, AttentionShape][] = [
  ['T=1, one head', { B: 1, T: 1, H: 1, G: 1, dk: 5, dv: 3 }],
  ['T=17 odd, one head', { B: 1, T: 17, H: 1, G: 1, dk: 5, dv: 3 }],
  ['MHA H=G=3, B=2', { B: 2, T: 9, H: 3, G: 3, dk: 5, dv: 3 }],
  ['MQA H=4, G=1', { B: 1, T: 20, H: 4, G: 1, dk: 5, dv: 3 }],
  ['GQA, several workgroups and tiles, B=2', { B: 2, T: 150, H: 4, G: 2, dk: 5, dv: 3 }],
  ['GQA 8/2, dk=36, dv=3 (2 threads per key), B=2', { B: 2, T: 70, H: 8, G: 2, dk: 36, dv: 3 }],
];

// The head split (dK/dV per head, then the heads' parts added: what the model plans run) on the
// shapes with several heads per group.
const SPLIT_SHAPES = SHAPES.filter(([, s]) => s.H > s.G).map(([n, s]): [string, AttentionShape, boolean] => [`${n}, head split`, s, true]);

describe('attention (dense causal, GQA)', () => {
  it.each([...SHAPES.map(([n, s]): [string, AttentionShape, boolean] => [n, s, false]), ...SPLIT_SHAPES])(
    'GPU matches the float64 reference: %s (rel RMS fwd ≤ 1e-5, bwd ≤ 1e-4)',
    async (_name, s, headSplit) => {
      const gpu = await getGpu();
      const x = randomInputs(s, s.T * 131 + s.H * 7 + s.dk, 1.5);
      const [g] = await runGpu(gpu, s, x, 1, headSplit);
      const ref = attentionForwardRef(x.q, x.k, x.v, s);
      const grad = attentionBackwardRef(x.q, x.k, x.v, x.dout, s);
      expectClose('out', g.out, ref.out, 1e-5);
      expectClose('lse', g.lse, ref.lse, 1e-5);
      expectClose('dq', g.dq, grad.dq, 1e-4);
      expectClose('dk', g.dk, grad.dk, 1e-4);
      expectClose('dv', g.dv, grad.dv, 1e-4);
      expect(gpu.reports).toEqual([]);
    },
  );

  it('tiles fit 16 KiB of workgroup memory for every dk, dv ≤ 128; the test shapes reach NS = 1 and 2', () => {
    const bad: string[] = [];
    for (let dk = 1; dk <= 128; dk++)
      for (let dv = 1; dv <= 128; dv++) {
        const x = attentionTiling(dk, dv);
        if (!(x.BK % 8 === 0 && x.BK >= 8 && x.BK * (x.DK4 + x.DV4) * 16 <= 16384)) bad.push(`BK for ${dk}, ${dv}`);
        if (!(x.KC4 <= 8 && x.VC4 <= 8 && x.NS * x.KC4 >= x.DK4 && x.NS * x.VC4 >= x.DV4)) bad.push(`slices for ${dk}, ${dv}`);
        if (!(x.BQ >= 1 && x.BQ * (16 * x.NS * (x.KC4 + x.VC4) + 8 + 8 * 64) <= 16384)) bad.push(`BQ for ${dk}, ${dv}`);
      }
    expect(bad).toEqual([]);
    expect(new Set(SHAPES.map(([, s]) => attentionTiling(s.dk, s.dv).NS))).toEqual(new Set([1, 2]));
  });

  it('causality: perturbing position s leaves every result at t < s bit-identical', async () => {
    const gpu = await getGpu();
    const s: AttentionShape = { B: 2, T: 150, H: 4, G: 2, dk: 5, dv: 3 };
    const p = 40; // inside the second forward workgroup and the first key tile
    const x = randomInputs(s, 7);
    const y = { q: x.q.slice(), k: x.k.slice(), v: x.v.slice(), dout: x.dout.slice() };
    const bump = (a: Float32Array, rest: number) => {
      for (let b = 0; b < s.B; b++) for (let i = 0; i < rest; i++) a[(b * s.T + p) * rest + i] += 0.5;
    };
    bump(y.q, s.H * s.dk);
    bump(y.k, s.G * s.dk);
    bump(y.v, s.G * s.dv);
    bump(y.dout, s.H * s.dv);
    const [a] = await runGpu(gpu, s, x);
    const [b] = await runGpu(gpu, s, y);
    expect(sameBits(positions(a.out, s, s.H * s.dv, 0, p), positions(b.out, s, s.H * s.dv, 0, p))).toBe(true);
    expect(sameBits(lsePositions(a.lse, s, 0, p), lsePositions(b.lse, s, 0, p))).toBe(true);
    expect(sameBits(lsePositions(a.delta, s, 0, p), lsePositions(b.delta, s, 0, p))).toBe(true);
    expect(sameBits(positions(a.dq, s, s.H * s.dk, 0, p), positions(b.dq, s, s.H * s.dk, 0, p))).toBe(true);
    // The perturbation is seen from s on (so the checks above can fail).
    expect(sameBits(positions(a.out, s, s.H * s.dv, p, p + 1), positions(b.out, s, s.H * s.dv, p, p + 1))).toBe(false);
    expect(sameBits(positions(a.dq, s, s.H * s.dk, p + 1, s.T), positions(b.dq, s, s.H * s.dk, p + 1, s.T))).toBe(false);
  });

  it('causality of dK/dV: perturbing q and dout at s leaves gradients of keys > s bit-identical', async () => {
    const gpu = await getGpu();
    const s: AttentionShape = { B: 1, T: 150, H: 4, G: 2, dk: 5, dv: 3 };
    const p = 40; // keys p+1.. share p's dK/dV workgroup and row tile, so masking is exercised
    const x = randomInputs(s, 8);
    const y = { ...x, q: x.q.slice(), dout: x.dout.slice() };
    for (let i = 0; i < s.H * s.dk; i++) y.q[p * s.H * s.dk + i] += 0.5;
    for (let i = 0; i < s.H * s.dv; i++) y.dout[p * s.H * s.dv + i] += 0.5;
    const [a] = await runGpu(gpu, s, x);
    const [b] = await runGpu(gpu, s, y);
    expect(sameBits(positions(a.dk, s, s.G * s.dk, p + 1, s.T), positions(b.dk, s, s.G * s.dk, p + 1, s.T))).toBe(true);
    expect(sameBits(positions(a.dv, s, s.G * s.dv, p + 1, s.T), positions(b.dv, s, s.G * s.dv, p + 1, s.T))).toBe(true);
    expect(sameBits(positions(a.dk, s, s.G * s.dk, 0, p + 1), positions(b.dk, s, s.G * s.dk, 0, p + 1))).toBe(false);
    expect(sameBits(positions(a.dv, s, s.G * s.dv, 0, p + 1), positions(b.dv, s, s.G * s.dv, 0, p + 1))).toBe(false);
  });

  it('is deterministic: reruns give the same bits', async () => {
    const gpu = await getGpu();
    const s: AttentionShape = { B: 1, T: 150, H: 4, G: 2, dk: 36, dv: 3 };
    const [a, b] = await runGpu(gpu, s, randomInputs(s, 9), 2);
    for (const key of ['out', 'lse', 'delta', 'dq', 'dk', 'dv'] as const) expect(sameBits(a[key], b[key]), key).toBe(true);
  });

  it('rejects bad shapes and short buffers, naming the field', async () => {
    const gpu = await getGpu();
    const s: AttentionShape = { B: 1, T: 4, H: 4, G: 2, dk: 8, dv: 8 };
    const n = sizes(s);
    const arena = createArena(gpu, 'bad', [
      { name: 'q', bytes: n.q * 4 },
      { name: 'kv', bytes: n.k * 4 },
      { name: 'out', bytes: n.out * 4 },
      { name: 'lse', bytes: n.lse * 4 },
    ]);
    const sl = { q: arena.get('q'), k: arena.get('kv'), v: arena.get('kv'), out: arena.get('out'), lse: arena.get('lse') };
    await expect(attentionForwardDispatch(gpu, { ...s, ...sl, G: 3 })).rejects.toThrow(/H = 4 must be a multiple of G = 3/);
    await expect(attentionForwardDispatch(gpu, { ...s, ...sl, dk: 129 })).rejects.toThrow(/dk = 129/);
    await expect(attentionForwardDispatch(gpu, { ...s, ...sl, T: 0 })).rejects.toThrow(/T = 0/);
    await expect(attentionForwardDispatch(gpu, { ...s, ...sl, dv: 2.5 })).rejects.toThrow(/dv = 2.5/);
    await expect(attentionForwardDispatch(gpu, { ...s, ...sl, T: 8 })).rejects.toThrow(/q holds/);
    for (const b of arena.buffers) b.destroy();
  });
});

describe('attention reference (float64)', () => {
  it('backward matches central finite differences of a random linear functional of out (rel RMS ≤ 1e-7)', () => {
    const s: AttentionShape = { B: 2, T: 5, H: 4, G: 2, dk: 3, dv: 2 };
    const r = rng(42);
    const n = sizes(s);
    const q = randn(n.q, r);
    const k = randn(n.k, r);
    const v = randn(n.v, r);
    const c = randn(n.out, r);
    const loss = (qq: Float64Array, kk: Float64Array, vv: Float64Array) => {
      const o = attentionForwardRef(qq, kk, vv, s).out;
      let l = 0;
      for (let i = 0; i < o.length; i++) l += c[i] * o[i];
      return l;
    };
    const g = attentionBackwardRef(q, k, v, c, s);
    const eps = 1e-5;
    const fd = (x: Float64Array) => {
      const out = new Float64Array(x.length);
      for (let i = 0; i < x.length; i++) {
        const x0 = x[i];
        x[i] = x0 + eps;
        const lp = loss(q, k, v);
        x[i] = x0 - eps;
        const lm = loss(q, k, v);
        x[i] = x0;
        out[i] = (lp - lm) / (2 * eps);
      }
      return out;
    };
    expectClose('dq', g.dq, fd(q), 1e-7);
    expectClose('dk', g.dk, fd(k), 1e-7);
    expectClose('dv', g.dv, fd(v), 1e-7);
  });

  it('forward matches closed forms: T=1 copies v_0; constant keys average the visible values', () => {
    const s: AttentionShape = { B: 1, T: 6, H: 2, G: 1, dk: 3, dv: 2 };
    const r = rng(5);
    const q = randn(s.T * s.H * s.dk, r);
    const v = randn(s.T * s.dv, r);
    const k = new Float64Array(s.T * s.dk).fill(0.3);
    const { out, lse } = attentionForwardRef(q, k, v, s);
    for (let t = 0; t < s.T; t++)
      for (let h = 0; h < s.H; h++) {
        let qk = 0;
        for (let c = 0; c < s.dk; c++) qk += q[(t * s.H + h) * s.dk + c] * 0.3;
        expect(lse[h * s.T + t]).toBeCloseTo(qk / Math.sqrt(s.dk) + Math.log(t + 1), 12);
        for (let c = 0; c < s.dv; c++) {
          let mean = 0;
          for (let j = 0; j <= t; j++) mean += v[j * s.dv + c] / (t + 1);
          expect(out[(t * s.H + h) * s.dv + c]).toBeCloseTo(mean, 12);
        }
      }
  });
});
