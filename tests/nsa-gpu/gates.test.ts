// NSA gates and the gated mix on the GPU vs src/reference/nsa/gates.ts (f32 vs f64 relative RMS:
// forward ≤ 1e-5, backward ≤ 1e-4). The reference's gate takes x·Wg; with x = logits and Wg = I
// (C = 3H) it is sigmoid(logits + bias), and its dx is exactly dlogits.
import { describe, expect, it } from 'vitest';

import { type GateAblation } from '../../src/definitions/gates';
import { createArena } from '../../src/gpu/arena';
import { combineBackwardDispatches, combineForwardDispatch, gateForwardDispatch } from '../../src/kernels/nsa-gates';
import {
  applyGateAblation,
  combineBackwardRef,
  combineRef,
  gateAblationBackward,
  gateBackwardRef,
  gateForwardRef,
} from '../../src/reference/nsa/gates';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a));
const identity = (n: number) => Float64Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0));

const ABLATIONS: GateAblation[] = [
  { kind: 'none' },
  { kind: 'force', branch: 'cmp' },
  { kind: 'force', branch: 'sel' },
  { kind: 'force', branch: 'win' },
  { kind: 'freeze', value: 0.5 },
  { kind: 'freeze', value: [0.25, 0.5, 0.75] },
];

async function setup(rows: number, H: number, dv: number, ablation: GateAblation, seed: number) {
  const gpu = await getGpu();
  const r = rng(seed);
  const n3 = rows * 3 * H;
  const n = rows * H * dv;
  const data = {
    logits: F(randn(n3, r, 2)),
    bias: F(randn(3 * H, r)),
    oCmp: F(randn(n, r)),
    oSel: F(randn(n, r)),
    oWin: F(randn(n, r)),
    dout: F(randn(n, r)),
    dbias0: F(randn(3 * H, r)),
  };
  const sizes: Record<string, number> = {
    logits: n3,
    bias: 3 * H,
    gates: n3,
    oCmp: n,
    oSel: n,
    oWin: n,
    out: n,
    dout: n,
    dCmp: n,
    dSel: n,
    dWin: n,
    dlogits: n3,
    dbias: 3 * H,
  };
  const arena = createArena(
    gpu,
    'gates',
    Object.entries(sizes).map(([name, k]) => ({ name, bytes: k * 4 })),
  );
  const s = (k: string) => arena.get(k);
  for (const k of ['logits', 'bias', 'oCmp', 'oSel', 'oWin', 'dout'] as const)
    if (data[k].length) gpu.write(s(k), new Float32Array(data[k]));
  for (const k of ['dCmp', 'dSel', 'dWin', 'dlogits', 'out']) if (sizes[k]) gpu.write(s(k), new Float32Array(randn(sizes[k], r))); // garbage
  gpu.write(s('dbias'), new Float32Array(data.dbias0));
  const fwd = [
    await gateForwardDispatch(gpu, { logits: s('logits'), bias: s('bias'), gates: s('gates'), rows, H, ablation }),
    await combineForwardDispatch(gpu, { gates: s('gates'), oCmp: s('oCmp'), oSel: s('oSel'), oWin: s('oWin'), out: s('out'), rows, H, dv }),
  ];
  const bwd = await combineBackwardDispatches(gpu, {
    dout: s('dout'),
    gates: s('gates'),
    oCmp: s('oCmp'),
    oSel: s('oSel'),
    oWin: s('oWin'),
    dCmp: s('dCmp'),
    dSel: s('dSel'),
    dWin: s('dWin'),
    dlogits: s('dlogits'),
    dbias: s('dbias'),
    rows,
    H,
    dv,
    ablation,
  });
  return { gpu, s, fwd, bwd, data };
}

const SHAPES: Array<[number, number, number]> = [
  [1, 1, 1],
  [37, 3, 5],
  [300, 4, 8],
];

describe('gates and gated combination', () => {
  for (const ablation of ABLATIONS) {
    it.each(SHAPES)(`${JSON.stringify(ablation)} rows=%i H=%i dv=%i: forward ≤ 1e-5, backward ≤ 1e-4 (dbias +=)`, async (rows, H, dv) => {
      const { gpu, s, fwd, bwd, data } = await setup(rows, H, dv, ablation, rows * 13 + H);
      gpu.run([...fwd, ...bwd]);
      const n3 = 3 * H;
      const sig = gateForwardRef(data.logits, identity(n3), data.bias, rows, n3, H);
      const g = applyGateAblation(sig, ablation);
      const gates = await gpu.readF32(s('gates'), rows * n3);
      expectClose('gates', gates, g, 1e-5);
      if (ablation.kind !== 'none') expect(Array.from(gates)).toEqual(Array.from(Float32Array.from(g))); // constants, exactly
      expectClose('out', await gpu.readF32(s('out'), rows * H * dv), combineRef(data.oCmp, data.oSel, data.oWin, g, rows, H, dv), 1e-5);

      const mix = combineBackwardRef(data.dout, data.oCmp, data.oSel, data.oWin, g, rows, H, dv);
      expectClose('dCmp', await gpu.readF32(s('dCmp')), mix.dOCmp, 1e-4);
      expectClose('dSel', await gpu.readF32(s('dSel')), mix.dOSel, 1e-4);
      expectClose('dWin', await gpu.readF32(s('dWin')), mix.dOWin, 1e-4);
      const gb = gateBackwardRef(data.logits, identity(n3), sig, gateAblationBackward(mix.dGates, ablation), rows, n3, H);
      const dlogits = await gpu.readF32(s('dlogits'), rows * n3);
      const dbias = await gpu.readF32(s('dbias'), n3);
      const dbiasRef = gb.dbg.map((v, i) => v + data.dbias0[i]);
      if (ablation.kind === 'none') {
        expectClose('dlogits', dlogits, gb.dx, 1e-4);
        expectClose('dbias', dbias, dbiasRef, 1e-4);
      } else {
        expect(Array.from(dlogits).every((v) => v === 0)).toBe(true);
        expect(Array.from(dbias)).toEqual(Array.from(Float32Array.from(dbiasRef))); // += 0: unchanged bits
      }
      expect(gpu.reports).toEqual([]);
    });
  }

  it('backward is bit-identical across runs', async () => {
    const { gpu, s, fwd, bwd, data } = await setup(300, 4, 8, { kind: 'none' }, 7);
    gpu.run(fwd);
    const runs: Uint32Array[][] = [];
    for (let k = 0; k < 2; k++) {
      gpu.write(s('dbias'), new Float32Array(data.dbias0));
      gpu.run(bwd);
      runs.push(await Promise.all(['dCmp', 'dSel', 'dWin', 'dlogits', 'dbias'].map(async (n) => new Uint32Array(await gpu.read(s(n))))));
    }
    runs[0].forEach((a, i) => expect(runs[1][i]).toEqual(a));
  });

  it('saturated logits give gates in [0, 1] without NaN', async () => {
    const gpu = await getGpu();
    const logits = new Float32Array([-1000, -90, -20, 0, 20, 90, 1000, -1e30, 1e30]);
    const arena = createArena(gpu, 'sat', [
      { name: 'l', bytes: 36 },
      { name: 'b', bytes: 36 },
      { name: 'g', bytes: 36 },
    ]);
    gpu.write(arena.get('l'), logits);
    gpu.write(arena.get('b'), new Float32Array(9));
    gpu.run([
      await gateForwardDispatch(gpu, {
        logits: arena.get('l'),
        bias: arena.get('b'),
        gates: arena.get('g'),
        rows: 1,
        H: 3,
        ablation: { kind: 'none' },
      }),
    ]);
    const g = Array.from(await gpu.readF32(arena.get('g'), 9));
    const want = Array.from(logits, (z) => 1 / (1 + Math.exp(-z)));
    g.forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThanOrEqual(1e-7));
  });

  it('rejects bad arguments before any GPU work', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['a', 'b', 'c'].map((name) => ({ name, bytes: 48 })),
    );
    const [x, y, z] = ['a', 'b', 'c'].map((k) => arena.get(k));
    const a = { logits: x, bias: y, gates: z, rows: 1, H: 4, ablation: { kind: 'none' } as GateAblation };
    await expect(gateForwardDispatch(gpu, { ...a, rows: 2 })).rejects.toThrow(/logits holds/);
    await expect(gateForwardDispatch(gpu, { ...a, gates: x })).rejects.toThrow(/overlap/);
    await expect(gateForwardDispatch(gpu, { ...a, ablation: { kind: 'freeze', value: NaN } })).rejects.toThrow(/freeze/);
    await expect(gateForwardDispatch(gpu, { ...a, H: 0 })).rejects.toThrow(/H = 0/);
  });
});
