import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { addDispatch } from '../../src/kernels/residual';
import { addRef } from '../../src/reference/residual';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

describe('residual add', () => {
  it.each([1, 7, 256, 1000, 70_000])('matches the reference for n=%i (rel RMS ≤ 1e-7: one f32 rounding)', async (n) => {
    const gpu = await getGpu();
    const r = rng(n);
    const a = randn(n, r);
    const b = randn(n, r);
    const arena = createArena(gpu, 't', [
      { name: 'a', bytes: n * 4 },
      { name: 'b', bytes: n * 4 },
      { name: 'out', bytes: n * 4 },
    ]);
    gpu.write(arena.get('a'), new Float32Array(a));
    gpu.write(arena.get('b'), new Float32Array(b));
    gpu.run([await addDispatch(gpu, arena.get('a'), arena.get('b'), arena.get('out'), n)]);
    const out = await gpu.readF32(arena.get('out'), n);
    expectClose('out', out, addRef(new Float32Array(a), new Float32Array(b)), 1e-7);
    expect(gpu.reports).toEqual([]);
  });
});
