import { describe, expect, it } from 'vitest';

import { type AdamwHyper } from '../../src/definitions/optimizer';
import { type Arena, createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { adamwDispatch, adamwHyperWords } from '../../src/kernels/adamw';
import { gradNormDispatches, gradNormPartialsLength } from '../../src/kernels/gradnorm';
import { adamwRef } from '../../src/reference/adamw';
import { gradNormRef } from '../../src/reference/gradnorm';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const base: Omit<AdamwHyper, 'step'> = { lr: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };

/** Two parameter groups, decayed and not, each in its own buffer (as when an arena is split). */
async function build(gpu: GpuContext, sizes: [number, number], maxNorm: number) {
  const arenas: Arena[] = sizes.map((n, k) =>
    createArena(
      gpu,
      `opt${k}`,
      ['p', 'g', 'm', 'v'].map((name) => ({ name, bytes: n * 4 })),
    ),
  );
  const ranges = sizes.map((n, k) => ({ slice: arenas[k].get('g'), n }));
  const scratch = createArena(gpu, 'stats', [
    { name: 'partials', bytes: gradNormPartialsLength(ranges) * 4 },
    { name: 'stats', bytes: 8 },
  ]);
  const stats = scratch.get('stats');
  const hyper = gpu.uniform(adamwHyperWords({ ...base, step: 1 }));
  const list = [
    ...(await gradNormDispatches(gpu, { ranges, partials: scratch.get('partials'), stats, maxNorm })),
    ...(await Promise.all(
      sizes.map((n, k) => {
        const a = arenas[k];
        return adamwDispatch(gpu, { param: a.get('p'), grad: a.get('g'), m: a.get('m'), v: a.get('v'), n, decay: k === 0, hyper, stats });
      }),
    )),
  ];
  return { arenas, stats, hyper, list };
}

type State = { p: Float64Array; m: Float64Array; v: Float64Array }[];

async function readState(gpu: GpuContext, arenas: Arena[], sizes: number[]) {
  return Promise.all(
    arenas.map(async (a, k) => ({
      p: await gpu.readF32(a.get('p'), sizes[k]),
      m: await gpu.readF32(a.get('m'), sizes[k]),
      v: await gpu.readF32(a.get('v'), sizes[k]),
    })),
  );
}

const bits = (x: Float32Array) => new Uint32Array(x.buffer.slice(0));

describe('AdamW (GPU vs float64 reference)', () => {
  // After 3 steps: p ≤ 1e-6 rel RMS; the update p − p0 and the moments ≤ 1e-5 (the update is
  // the difference of two f32 parameters, ~0.15 against |p| ~ 1: a few e-7 from storing p in f32).
  it.each<[number, number, number]>([
    [1, 1, 0],
    [1000, 37, 0],
    [1000, 37, 0.2],
    [70_001, 300, 1],
  ])('sizes %i/%i, maxNorm %f: 3 steps match (decay on the first group only)', async (n0, n1, clip) => {
    const gpu = await getGpu();
    const sizes: [number, number] = [n0, n1];
    const r = rng(n0 * 31 + n1);
    const { arenas, hyper, list } = await build(gpu, sizes, clip);
    const p0 = sizes.map((n) => new Float32Array(randn(n, r)));
    const ref: State = sizes.map((n, k) => ({ p: Float64Array.from(p0[k]), m: new Float64Array(n), v: new Float64Array(n) }));
    arenas.forEach((a, k) => {
      gpu.write(a.get('p'), p0[k]);
      gpu.write(a.get('m'), new Float32Array(sizes[k]));
      gpu.write(a.get('v'), new Float32Array(sizes[k]));
    });
    let clipped = false;
    for (let step = 1; step <= 3; step++) {
      const grads = sizes.map((n) => new Float32Array(randn(n, r, 0.1)));
      arenas.forEach((a, k) => gpu.write(a.get('g'), grads[k]));
      const h = { ...base, step };
      hyper.write(adamwHyperWords(h));
      gpu.run(list);
      const { scale } = gradNormRef(grads, clip);
      clipped ||= scale < 1;
      ref.forEach((s, k) => adamwRef(s.p, grads[k], s.m, s.v, h, k === 0, scale));
    }
    // The clipped cases must really clip (norm of 1000 N(0, 0.01) values ≈ 3.2 > 1).
    expect(clipped).toBe(clip > 0 && n0 > 1);
    const got = await readState(gpu, arenas, sizes);
    got.forEach((g, k) => {
      expectClose(`p[${k}]`, g.p, ref[k].p, 1e-6);
      expectClose(
        `Δp[${k}]`,
        g.p.map((x, i) => x - p0[k][i]),
        ref[k].p.map((x, i) => x - p0[k][i]),
        1e-5,
      );
      expectClose(`m[${k}]`, g.m, ref[k].m, 1e-5);
      expectClose(`v[${k}]`, g.v, ref[k].v, 1e-5);
    });
    expect(gpu.reports).toEqual([]);
  });

  it.each([
    ['NaN', NaN],
    ['Inf', Infinity],
  ])('a %s gradient leaves p, m, v bit-identical (the step is skipped)', async (_name, bad) => {
    const gpu = await getGpu();
    const sizes: [number, number] = [513, 9];
    const r = rng(77);
    const { arenas, hyper, list, stats } = await build(gpu, sizes, 1);
    arenas.forEach((a, k) => {
      for (const name of ['p', 'm', 'g']) gpu.write(a.get(name), new Float32Array(randn(sizes[k], r)));
      gpu.write(a.get('v'), new Float32Array(randn(sizes[k], r).map(Math.abs)));
    });
    const g1 = new Float32Array(randn(sizes[1], r));
    g1[4] = bad;
    gpu.write(arenas[1].get('g'), g1);
    hyper.write(adamwHyperWords({ ...base, step: 5 }));
    const before = await readState(gpu, arenas, sizes);
    gpu.run(list);
    const after = await readState(gpu, arenas, sizes);
    const [norm, scale] = await gpu.readF32(stats, 2);
    expect(Number.isFinite(norm)).toBe(false);
    expect(scale).toBe(0);
    after.forEach((s, k) => {
      expect(bits(s.p)).toEqual(bits(before[k].p));
      expect(bits(s.m)).toEqual(bits(before[k].m));
      expect(bits(s.v)).toEqual(bits(before[k].v));
    });
  });

  it('uses the clip scale from stats[1] and is bit-identical across reruns', async () => {
    const gpu = await getGpu();
    const n = 999;
    const r = rng(5);
    const a = createArena(
      gpu,
      'one',
      ['p', 'g', 'm', 'v', 'stats'].map((name) => ({ name, bytes: name === 'stats' ? 8 : n * 4 })),
    );
    const init = {
      p: new Float32Array(randn(n, r)),
      g: new Float32Array(randn(n, r, 0.1)),
      m: new Float32Array(randn(n, r, 0.01)),
      v: new Float32Array(n).fill(1e-3),
    };
    const h: AdamwHyper = { ...base, step: 2 };
    const hyper = gpu.uniform(adamwHyperWords(h));
    const d = await adamwDispatch(gpu, {
      param: a.get('p'),
      grad: a.get('g'),
      m: a.get('m'),
      v: a.get('v'),
      n,
      decay: true,
      hyper,
      stats: a.get('stats'),
    });
    const once = async () => {
      for (const [k, x] of Object.entries(init)) gpu.write(a.get(k), x);
      gpu.write(a.get('stats'), new Float32Array([3, 0.25]));
      gpu.run([d]);
      return gpu.readF32(a.get('p'), n);
    };
    const first = await once();
    const second = await once();
    expect(bits(second)).toEqual(bits(first));
    const ref = { p: Float64Array.from(init.p), m: Float64Array.from(init.m), v: Float64Array.from(init.v) };
    adamwRef(ref.p, init.g, ref.m, ref.v, h, true, 0.25);
    expectClose(
      'Δp',
      first.map((x, i) => x - init.p[i]),
      ref.p.map((x, i) => x - init.p[i]),
      1e-5,
    );
  });

  it('hyper words are the f64 factors, rounded once; step < 1 is refused', () => {
    const h: AdamwHyper = { lr: 3e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, step: 10 };
    const exact = [1 - 3e-5, 0.9, 0.1, 0.999, 0.001, 3e-4 / (1 - 0.9 ** 10), 1 / Math.sqrt(1 - 0.999 ** 10), 1e-8];
    const words = adamwHyperWords(h);
    expect(words.length).toBe(exact.length);
    words.forEach((w, i) => {
      if (typeof w === 'number') throw new Error(`word ${i} is not an f32`);
      // One f32 rounding of the exact value (≤ 2^-24 relative). Forming 1 − β2 from an f32 β2
      // would be off by ~1e-5 relative: that is what precomputing in f64 avoids.
      expect(Math.abs(Math.fround(w.f32) - exact[i]) / exact[i]).toBeLessThanOrEqual(2 ** -24);
    });
    expect(() => adamwHyperWords({ ...h, step: 0 })).toThrow(/step/);
  });
});

describe('AdamW reference', () => {
  it('first step moves each decayed parameter by lr·sign(g) after decay (|g| ≫ eps)', () => {
    const h: AdamwHyper = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-12, weightDecay: 0.5, step: 1 };
    const p = Float64Array.from([1, -2, 3]);
    const m = new Float64Array(3);
    const v = new Float64Array(3);
    adamwRef(p, [0.5, -4, 1e-3], m, v, h, true, 2);
    const decayed = [1, -2, 3].map((x) => x * (1 - 0.005));
    const want = decayed.map((x, i) => x - 0.01 * Math.sign([0.5, -4, 1e-3][i]));
    want.forEach((w, i) => expect(p[i]).toBeCloseTo(w, 9));
    expect(m[1]).toBeCloseTo(0.1 * -8, 12);
    expect(v[1]).toBeCloseTo(0.001 * 64, 12);
  });
});
