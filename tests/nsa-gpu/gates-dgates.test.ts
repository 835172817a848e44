// The gated mix backward wrt the gate values (combineBackwardGatesDispatches, used by the op API)
// vs combineBackwardRef: dO_c = g_c·dO and dgates = ⟨dO, O_c⟩, f32 vs f64 relative RMS ≤ 1e-4
// (backward tolerance; dv-term dot products in f32). Both outputs overwrite.
import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { combineBackwardGatesDispatches } from '../../src/kernels/nsa-gates';
import { combineBackwardRef } from '../../src/reference/nsa/gates';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a));

async function setup(rows: number, H: number, dv: number, seed: number) {
  const gpu = await getGpu();
  const r = rng(seed);
  const n3 = rows * 3 * H;
  const n = rows * H * dv;
  const data = {
    gates: F(Array.from({ length: n3 }, () => r())), // values in [0, 1), as sigmoids give
    oCmp: F(randn(n, r)),
    oSel: F(randn(n, r)),
    oWin: F(randn(n, r)),
    dout: F(randn(n, r)),
  };
  const sizes: Record<string, number> = { gates: n3, oCmp: n, oSel: n, oWin: n, dout: n, dCmp: n, dSel: n, dWin: n, dgates: n3 };
  const arena = createArena(
    gpu,
    'dgates',
    Object.entries(sizes).map(([name, k]) => ({ name, bytes: k * 4 })),
  );
  const s = (k: string) => arena.get(k);
  for (const k of ['gates', 'oCmp', 'oSel', 'oWin', 'dout'] as const) gpu.write(s(k), new Float32Array(data[k]));
  // Garbage in the outputs: each must be overwritten, not accumulated into.
  for (const k of ['dCmp', 'dSel', 'dWin', 'dgates']) gpu.write(s(k), new Float32Array(randn(sizes[k], r, 3)));
  const bwd = await combineBackwardGatesDispatches(gpu, {
    dout: s('dout'),
    gates: s('gates'),
    oCmp: s('oCmp'),
    oSel: s('oSel'),
    oWin: s('oWin'),
    dCmp: s('dCmp'),
    dSel: s('dSel'),
    dWin: s('dWin'),
    dgates: s('dgates'),
    rows,
    H,
    dv,
  });
  return { gpu, s, bwd, data };
}

describe('gated mix backward wrt the gate values', () => {
  it.each([
    [1, 1, 1],
    [37, 3, 5],
    [300, 4, 8],
  ])('rows=%i H=%i dv=%i: dO_c and dgates ≤ 1e-4 rel RMS (overwrite)', async (rows, H, dv) => {
    const { gpu, s, bwd, data } = await setup(rows, H, dv, rows * 17 + dv);
    gpu.run(bwd);
    const ref = combineBackwardRef(data.dout, data.oCmp, data.oSel, data.oWin, data.gates, rows, H, dv);
    expectClose('dCmp', await gpu.readF32(s('dCmp')), ref.dOCmp, 1e-4);
    expectClose('dSel', await gpu.readF32(s('dSel')), ref.dOSel, 1e-4);
    expectClose('dWin', await gpu.readF32(s('dWin')), ref.dOWin, 1e-4);
    expectClose('dgates', await gpu.readF32(s('dgates'), rows * 3 * H), ref.dGates, 1e-4);
    expect(gpu.reports).toEqual([]);
  });

  it('no sigmoid factor: with gates near 0 and 1 dgates still equals ⟨dO, O_c⟩', async () => {
    const [rows, H, dv] = [5, 2, 3];
    const { gpu, s, data } = await setup(rows, H, dv, 3);
    const g = Float32Array.from({ length: rows * 3 * H }, (_, i) => (i % 2 === 0 ? 0 : 1)); // g(1 − g) = 0
    gpu.write(s('gates'), g);
    gpu.run(
      await combineBackwardGatesDispatches(gpu, {
        dout: s('dout'),
        gates: s('gates'),
        oCmp: s('oCmp'),
        oSel: s('oSel'),
        oWin: s('oWin'),
        dCmp: s('dCmp'),
        dSel: s('dSel'),
        dWin: s('dWin'),
        dgates: s('dgates'),
        rows,
        H,
        dv,
      }),
    );
    const ref = combineBackwardRef(data.dout, data.oCmp, data.oSel, data.oWin, g, rows, H, dv);
    const dg = await gpu.readF32(s('dgates'), rows * 3 * H);
    expect(Array.from(dg).some((v) => v !== 0)).toBe(true);
    expectClose('dgates', dg, ref.dGates, 1e-4);
    expectClose('dCmp', await gpu.readF32(s('dCmp')), ref.dOCmp, 1e-4);
  });

  it('is bit-identical across runs', async () => {
    const { gpu, s, bwd } = await setup(300, 4, 8, 11);
    const runs: Uint32Array[][] = [];
    for (let k = 0; k < 2; k++) {
      gpu.run(bwd);
      runs.push(await Promise.all(['dCmp', 'dSel', 'dWin', 'dgates'].map(async (n) => new Uint32Array(await gpu.read(s(n))))));
    }
    runs[0].forEach((a, i) => expect(runs[1][i]).toEqual(a));
  });

  it('rejects short and overlapping buffers before any GPU work', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((name) => ({ name, bytes: 24 })),
    );
    const [a, b, c, d, e, f, g, h, i] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((k) => arena.get(k));
    const args = { dout: a, gates: b, oCmp: c, oSel: d, oWin: e, dCmp: f, dSel: g, dWin: h, dgates: i, rows: 1, H: 2, dv: 3 };
    const before = gpu.counters.buffersCreated;
    await expect(combineBackwardGatesDispatches(gpu, { ...args, dv: 4 })).rejects.toThrow(/dout holds/);
    await expect(combineBackwardGatesDispatches(gpu, { ...args, dgates: a })).rejects.toThrow(/overlap/);
    await expect(combineBackwardGatesDispatches(gpu, { ...args, H: 0 })).rejects.toThrow(/H = 0/);
    expect(gpu.counters.buffersCreated).toBe(before);
  });
});
