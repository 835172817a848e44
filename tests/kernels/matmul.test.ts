// Tiled register-blocked matmul vs the float64 reference: all four transposes, accumulate on and
// off, odd sizes (scalar loads) and multiples of 4 (vec4 loads), tiles partly outside the matrix.
import { describe, expect, it } from 'vitest';
import { createArena } from '../../src/gpu/arena';
import { benchMatmul } from '../../src/kernels/matmul-bench';
import { matmulDispatch } from '../../src/kernels/matmul';
import { matmulRef } from '../../src/reference/matmul';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const shapes: Array<[number, number, number]> = [
  [1, 1, 1],
  [7, 13, 5],
  [33, 65, 17],
  [64, 48, 80],
];
const combos = [false, true].flatMap((transA) => [false, true].flatMap((transB) => [false, true].map((accumulate) => ({ transA, transB, accumulate }))));

async function run(M: number, N: number, K: number, o: { transA: boolean; transB: boolean; accumulate: boolean }, seed: number) {
  const gpu = await getGpu();
  const r = rng(seed);
  const a = new Float32Array(randn(M * K, r));
  const b = new Float32Array(randn(K * N, r));
  const c0 = new Float32Array(randn(M * N, r));
  const arena = createArena(gpu, 'mm', [
    { name: 'a', bytes: 4 * M * K },
    { name: 'b', bytes: 4 * K * N },
    { name: 'c', bytes: 4 * M * N },
  ]);
  gpu.write(arena.get('a'), a);
  gpu.write(arena.get('b'), b);
  gpu.write(arena.get('c'), c0);
  gpu.run([await matmulDispatch(gpu, { a: arena.get('a'), b: arena.get('b'), c: arena.get('c'), M, N, K, ...o })]);
  const out = await gpu.readF32(arena.get('c'), M * N);
  for (const buf of arena.buffers) buf.destroy();
  return { out, ref: matmulRef(a, b, M, N, K, { transA: o.transA, transB: o.transB, c: o.accumulate ? c0 : undefined }) };
}

describe('matmul', () => {
  for (const [M, N, K] of shapes) {
    it(`M=${M} N=${N} K=${K}: every transpose × accumulate matches float64 (rel RMS ≤ 1e-6)`, async () => {
      for (const o of combos) {
        const { out, ref } = await run(M, N, K, o, M * 1000 + N + K);
        expectClose(`${JSON.stringify(o)}`, out, ref, 1e-6);
      }
    });
  }

  it('is deterministic: two runs give the same bits', async () => {
    const o = { transA: true, transB: false, accumulate: true };
    const x = await run(33, 65, 17, o, 5);
    const y = await run(33, 65, 17, o, 5);
    expect(new Uint32Array(x.out.buffer)).toEqual(new Uint32Array(y.out.buffer));
  });

  it('rejects an output that overlaps an input, naming it', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'mm-bad', [{ name: 'x', bytes: 64 }]);
    await expect((async () => matmulDispatch(gpu, { a: arena.get('x'), b: arena.get('x'), c: arena.get('x'), M: 2, N: 2, K: 2 }))()).rejects.toThrow(/c overlaps an input/);
  });

  it('benchMatmul reports a finite, positive GFLOP/s', async () => {
    const gpu = await getGpu();
    const [r] = await benchMatmul(gpu, [{ M: 64, N: 64, K: 64 }], { repeats: 2 });
    expect(r.M).toBe(64);
    expect(Number.isFinite(r.gflops) && r.gflops > 0).toBe(true);
  });
});
