import { describe, expect, it } from 'vitest';

import { scoredTargets } from '../../src/definitions/targets';
import { IGNORE_TARGET } from '../../src/definitions/targets';
import { createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { crossEntropyDispatch } from '../../src/kernels/crossentropy';
import { crossEntropyRef } from '../../src/reference/crossentropy';
import { expectClose, randn, relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

interface Case {
  N: number;
  V: number;
  seed: number;
  /** Logit spread and offset: a large offset checks the running-max stability. */
  spread?: number;
  offset?: number;
}

function makeData({ N, V, seed, spread = 3, offset = 0 }: Case) {
  const r = rng(seed);
  const logits = new Float32Array(randn(N * V, r, spread).map((x) => x + offset));
  const targets = new Int32Array(N);
  for (let n = 0; n < N; n++) targets[n] = Math.floor(r() * V);
  return { logits, targets };
}

async function runGpu(gpu: GpuContext, c: Case, gradScale: number, inPlace: boolean, targetsOverride?: Int32Array) {
  const { N, V } = c;
  const { logits, targets: t0 } = makeData(c);
  const targets = targetsOverride ?? t0;
  const arena = createArena(gpu, 'xent', [
    { name: 'logits', bytes: N * V * 4 },
    { name: 'targets', bytes: N * 4 },
    { name: 'losses', bytes: N * 4 },
    { name: 'dlogits', bytes: N * V * 4 },
  ]);
  gpu.write(arena.get('logits'), logits);
  gpu.write(arena.get('targets'), targets);
  const dl = inPlace ? arena.get('logits') : arena.get('dlogits');
  const d = await crossEntropyDispatch(gpu, {
    logits: arena.get('logits'),
    targets: arena.get('targets'),
    losses: arena.get('losses'),
    dlogits: dl,
    N,
    V,
    gradScale,
  });
  gpu.run([d]);
  const losses = await gpu.readF32(arena.get('losses'), N);
  const dlogits = await gpu.readF32(dl, N * V);
  return { logits, targets, losses, dlogits, d, arena };
}

const scaled = (x: Float64Array, s: number) => x.map((v) => v * s);

describe('cross-entropy (GPU vs float64 reference)', () => {
  // f32 vs f64 rel RMS ≤ 1e-6 for losses and gradients: one exp/log per element, sums of ≤ V terms.
  it.each<Case>([
    { N: 1, V: 1, seed: 1 },
    { N: 1, V: 3, seed: 2 },
    { N: 5, V: 3, seed: 3 },
    { N: 3, V: 255, seed: 4 },
    { N: 7, V: 1000, seed: 5, spread: 10, offset: 200 },
    { N: 33, V: 257, seed: 6 },
    { N: 2, V: 50257, seed: 7 },
  ])('N=$N V=$V matches (rel RMS ≤ 1e-6)', async (c) => {
    const gpu = await getGpu();
    const gradScale = 1 / (c.N * 4);
    const { logits, targets, losses, dlogits } = await runGpu(gpu, c, gradScale, false);
    const ref = crossEntropyRef(logits, targets, c.N, c.V);
    if (c.V === 1) {
      // log-softmax of a single logit is exactly 0 on both sides: relRms has no scale here.
      expect([...losses]).toEqual(new Array(c.N).fill(0));
      expect([...dlogits]).toEqual(new Array(c.N).fill(0));
    } else {
      expectClose('losses', losses, ref.losses, 1e-6);
      expectClose('dlogits', dlogits, scaled(ref.dlogits, gradScale), 1e-6);
    }
    expect(gpu.reports).toEqual([]);
  });

  it('in place (dlogits = logits) equals the out-of-place result bit for bit', async () => {
    const gpu = await getGpu();
    const c: Case = { N: 9, V: 1031, seed: 8 };
    const a = await runGpu(gpu, c, 0.125, false);
    const b = await runGpu(gpu, c, 0.125, true);
    expect(new Uint32Array(b.losses.buffer)).toEqual(new Uint32Array(a.losses.buffer));
    expect(new Uint32Array(b.dlogits.buffer)).toEqual(new Uint32Array(a.dlogits.buffer));
    const ref = crossEntropyRef(a.logits, a.targets, c.N, c.V);
    expectClose('dlogits in place', b.dlogits, scaled(ref.dlogits, 0.125), 1e-6);
    expect(gpu.reports).toEqual([]);
  });

  it('is bit-identical across reruns', async () => {
    const gpu = await getGpu();
    const c: Case = { N: 4, V: 5003, seed: 9 };
    const a = await runGpu(gpu, c, 1, false);
    gpu.run([a.d]);
    const losses = await gpu.readF32(a.arena.get('losses'), c.N);
    const dlogits = await gpu.readF32(a.arena.get('dlogits'), c.N * c.V);
    expect(new Uint32Array(losses.buffer)).toEqual(new Uint32Array(a.losses.buffer));
    expect(new Uint32Array(dlogits.buffer)).toEqual(new Uint32Array(a.dlogits.buffer));
  });

  it('a target outside [0, V) other than -1 poisons only its row with NaN', async () => {
    const gpu = await getGpu();
    const c: Case = { N: 4, V: 10, seed: 10 };
    const targets = new Int32Array([3, -2, 10, 0]);
    const { logits, losses, dlogits } = await runGpu(gpu, c, 1, false, targets);
    const ref = crossEntropyRef(logits, targets, c.N, c.V);
    expect(Number.isNaN(losses[1]) && Number.isNaN(losses[2])).toBe(true);
    expect(dlogits.slice(10, 30).every(Number.isNaN)).toBe(true);
    expect(ref.dlogits.slice(10, 30).every(Number.isNaN)).toBe(true);
    expectClose('valid rows loss', [losses[0], losses[3]], [ref.losses[0], ref.losses[3]], 1e-6);
    expectClose(
      'valid rows grad',
      [...dlogits.slice(0, 10), ...dlogits.slice(30)],
      [...ref.dlogits.slice(0, 10), ...ref.dlogits.slice(30)],
      1e-6,
    );
    expect(gpu.reports).toEqual([]);
  });

  it('IGNORE_TARGET (-1) rows: loss 0 and gradient 0 exactly, on both sides; other rows unchanged', async () => {
    const gpu = await getGpu();
    const c: Case = { N: 6, V: 300, seed: 12 };
    const targets = new Int32Array([IGNORE_TARGET, 5, IGNORE_TARGET, 299, 0, IGNORE_TARGET]);
    const { logits, losses, dlogits } = await runGpu(gpu, c, 0.5, false, targets);
    const ref = crossEntropyRef(logits, targets, c.N, c.V);
    const ignored = [0, 2, 5];
    for (const n of ignored) {
      expect(losses[n]).toBe(0);
      expect(ref.losses[n]).toBe(0);
      expect(dlogits.slice(n * c.V, (n + 1) * c.V).every((x) => x === 0)).toBe(true);
      expect(ref.dlogits.slice(n * c.V, (n + 1) * c.V).every((x) => x === 0)).toBe(true);
    }
    const rows = [1, 3, 4];
    const pick = (a: ArrayLike<number>) => rows.flatMap((n) => Array.from({ length: c.V }, (_, j) => a[n * c.V + j]));
    expectClose(
      'scored rows loss',
      rows.map((n) => losses[n]),
      rows.map((n) => ref.losses[n]),
      1e-6,
    );
    expectClose('scored rows grad', pick(dlogits), scaled(Float64Array.from(pick(ref.dlogits)), 0.5), 1e-6);
    // The same rows with every target scored give the same scored-row results bit for bit.
    const all = await runGpu(
      gpu,
      c,
      0.5,
      false,
      targets.map((t) => (t === IGNORE_TARGET ? 1 : t)),
    );
    expect(new Uint32Array(Float32Array.from(pick(all.dlogits)).buffer)).toEqual(new Uint32Array(Float32Array.from(pick(dlogits)).buffer));
    expect(scoredTargets(targets)).toBe(3);
    expect(gpu.reports).toEqual([]);
  });

  it('a NaN or +Inf logit makes its row NaN (so the grad-norm guard skips the step), other rows exact', async () => {
    const gpu = await getGpu();
    const c: Case = { N: 3, V: 600, seed: 13 };
    const { logits, targets } = makeData(c);
    logits[600 + 321] = NaN;
    logits[1200 + 5] = Infinity;
    const arena = createArena(gpu, 'xnan', [
      { name: 'logits', bytes: logits.byteLength },
      { name: 'targets', bytes: 12 },
      { name: 'losses', bytes: 12 },
    ]);
    gpu.write(arena.get('logits'), logits);
    gpu.write(arena.get('targets'), targets);
    const sl = arena.get('logits');
    gpu.run([
      await crossEntropyDispatch(gpu, {
        logits: sl,
        targets: arena.get('targets'),
        losses: arena.get('losses'),
        dlogits: sl,
        N: 3,
        V: 600,
        gradScale: 1,
      }),
    ]);
    const losses = await gpu.readF32(arena.get('losses'), 3);
    const dlogits = await gpu.readF32(sl, 1800);
    const ref = crossEntropyRef(logits, targets, 3, 600);
    for (const row of [1, 2]) {
      expect(Number.isNaN(losses[row]) && Number.isNaN(ref.losses[row])).toBe(true);
      expect(dlogits.slice(row * 600, row * 600 + 600).every(Number.isNaN)).toBe(true);
      expect(ref.dlogits.slice(row * 600, row * 600 + 600).every(Number.isNaN)).toBe(true);
    }
    expectClose('row 0 grad', dlogits.slice(0, 600), ref.dlogits.slice(0, 600), 1e-6);
    expectClose('row 0 loss', [losses[0]], [ref.losses[0]], 1e-6);
  });

  it('rejects a dlogits that partly overlaps logits', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'x', [
      { name: 'a', bytes: 4096 },
      { name: 't', bytes: 16 },
      { name: 'l', bytes: 16 },
    ]);
    const a = arena.get('a');
    const shifted = { buffer: a.buffer, offset: a.offset + 256, size: a.size - 256 };
    await expect(
      crossEntropyDispatch(gpu, {
        logits: a,
        targets: arena.get('t'),
        losses: arena.get('l'),
        dlogits: shifted,
        N: 2,
        V: 100,
        gradScale: 1,
      }),
    ).rejects.toThrow(/overlap/);
  });
});

describe('cross-entropy reference', () => {
  it('gradient equals central finite differences of the summed loss (rel RMS ≤ 1e-7)', () => {
    const N = 3;
    const V = 7;
    const { logits: l32, targets } = makeData({ N, V, seed: 11, spread: 2 });
    const logits = Float64Array.from(l32);
    const { dlogits } = crossEntropyRef(logits, targets, N, V);
    const total = (x: Float64Array) => crossEntropyRef(x, targets, N, V).losses.reduce((a, b) => a + b, 0);
    const h = 1e-5;
    const fd = new Float64Array(N * V);
    for (let i = 0; i < N * V; i++) {
      const p = logits.slice();
      const m = logits.slice();
      p[i] += h;
      m[i] -= h;
      fd[i] = (total(p) - total(m)) / (2 * h);
    }
    expect(relRms(dlogits, fd)).toBeLessThanOrEqual(1e-7);
  });

  it('loss is log V for uniform logits and matches a direct formula', () => {
    const { losses } = crossEntropyRef([2, 2, 2, 2, 0, Math.log(3)], [1, 1], 2, 3);
    expect(losses[0]).toBeCloseTo(Math.log(3), 14);
    // Row 2: logits [2, 0, ln 3] with target 1 → log(e² + 1 + 3) − 0.
    expect(losses[1]).toBeCloseTo(Math.log(Math.exp(2) + 4), 14);
  });
});
