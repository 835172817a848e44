// The standalone NSA op (src/model/nsa/op.ts) end to end vs the float64 layer reference
// (nsaForwardRef / nsaBackwardRef per sequence): forward out and per-branch outputs rel RMS ≤ 1e-5,
// every input gradient ≤ 1e-4, selection exactly equal. Inputs are drawn (seed after seed, in a
// fixed order) until no selection boundary is a near-tie in the float64 scores, so f32 rounding
// cannot flip a choice. Also: validation before any GPU work, no allocation per call, determinism,
// and the GPU-resident binding.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { createArena } from '../../src/gpu/arena';
import { NsaOp } from '../../src/model/nsa/op';
import { NsaOpConfigError, nsaOpTensorSizes } from '../../src/model/nsa/op-bind';
import { randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { type Case, checkCase, f32, randomInputs } from './op-harness';

const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };

// One set of kernel constants (H/G = 2, dk = 5, dv = 3 — so dk ≠ dv everywhere —, nSel = 3,
// lSel = 8, as tests/nsa-gpu/attention.test.ts): pipelines compile once (seconds each on
// SwiftShader). Everything else varies through uniforms. Other head layouts: op-heads.test.ts.
const [DK, DV] = [5, 3];
const sh = (B: number, T: number, G: number): AttentionShape => ({ B, T, H: 2 * G, G, dk: DK, dv: DV });

const EDGE_CASES: Case[] = [
  { name: 'base, B = 2, G = 2, T = 37 (not a multiple of d or lSel)', shape: sh(2, 37, 2), cfg: BASE },
  { name: 'T < l (no compressed block), B = 2', shape: sh(2, 3, 1), cfg: BASE },
  { name: 'T = 29, l = d = 4 (no overlap between compressed blocks)', shape: sh(1, 29, 1), cfg: { ...BASE, l: 4, d: 4 } },
  { name: 'G = 1, w = 1', shape: sh(1, 19, 1), cfg: { ...BASE, w: 1 } },
  { name: 'w ≥ T', shape: sh(1, 19, 1), cfg: { ...BASE, w: 40 } },
  { name: 'nSel ≥ blocks (T = 20: 3 blocks)', shape: sh(1, 20, 1), cfg: BASE },
  { name: 'nSel = forceInit + forceLocal', shape: sh(1, 41, 1), cfg: { ...BASE, forceLocal: 2 } },
  { name: 'no forced block (pure top-3)', shape: sh(1, 33, 2), cfg: { ...BASE, forceInit: false, forceLocal: 0 } },
  { name: 'l = d = lSel = 8, forceInit only', shape: sh(1, 30, 1), cfg: { ...BASE, l: 8, d: 8, forceLocal: 0 } },
];

/** Random valid configs (l, d, w, forced blocks) and shapes (B, T, G), seeded; lSel = 8, nSel = 3. */
function randomCases(n: number, seed: number): Case[] {
  const r = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const out: Case[] = [];
  for (let k = 0; k < n; k++) {
    const d = pick([1, 2, 4]);
    const l = pick([d, 2 * d, 4 * d].filter((x) => x <= 8));
    const forceInit = r() < 0.6;
    const forceLocal = int(0, forceInit ? 2 : 3);
    const cfg: NsaConfig = { l, d, lSel: 8, nSel: 3, w: int(1, 12), phi: 'avg', forceInit, forceLocal };
    out.push({ name: `random #${k}`, shape: sh(int(1, 2), int(1, 45), int(1, 2)), cfg });
  }
  return out;
}

describe('NSA op vs the float64 layer reference', () => {
  it.each(EDGE_CASES)('$name: forward ≤ 1e-5, grads ≤ 1e-4, selection exact', async (cs) => {
    await checkCase(cs, cs.shape.T * 101 + cs.shape.H * 7 + cs.cfg.nSel);
  });

  it.each(randomCases(5, 2024))('$name (B=$shape.B, T=$shape.T, G=$shape.G, $cfg): forward ≤ 1e-5, grads ≤ 1e-4', async (cs) => {
    await checkCase(cs, cs.shape.T * 13 + 5);
  });
});

describe('NSA op API', () => {
  const shape = sh(2, 21, 2);

  it('rejects invalid configs naming the field, before creating any GPU buffer', async () => {
    const gpu = await getGpu();
    const bad: Array<[Partial<NsaConfig>, Partial<AttentionShape>, RegExp]> = [
      [{ d: 3 }, {}, /nsa\.d: d \(3\) must divide l/],
      [{ l: 16 }, {}, /nsa\.lSel: lSel \(8\) must be ≥ l/],
      [{ nSel: 1 }, {}, /nsa\.nSel: nSel \(1\) must be ≥ forceInit \+ forceLocal/],
      [{ w: 0 }, {}, /nsa\.w/],
      [{ phi: 'mlp' }, {}, /nsa\.phi/],
      [{}, { H: 3 }, /shape\.H: H \(3\) must be a multiple of G/],
      [{}, { T: 0 }, /shape\.T/],
      [{}, { B: 0 }, /shape\.B/],
      [{}, { dk: 129 }, /shape\.dk/],
    ];
    for (const [c, s, re] of bad) {
      const before = gpu.counters.buffersCreated;
      const p = NsaOp.create(gpu, { ...shape, ...s }, { ...BASE, ...c });
      await expect(p).rejects.toThrow(re);
      await expect(p).rejects.toBeInstanceOf(NsaOpConfigError);
      expect(gpu.counters.buffersCreated, JSON.stringify({ c, s })).toBe(before);
    }
    const e = await NsaOp.create(gpu, shape, { ...BASE, d: 0, w: -1 }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(NsaOpConfigError);
    expect((e as NsaOpConfigError).issues.map((i) => i.field).sort()).toEqual(['nsa.d', 'nsa.w']);
  });

  it('forward and backward create no buffer and submit once each; outputs are bit-identical across runs', async () => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, shape, BASE);
    try {
      const x = randomInputs(shape, 3);
      const dout = f32(randn(shape.B * shape.T * shape.H * shape.dv, rng(4)));
      const runs: Uint32Array[][] = [];
      for (let k = 0; k < 2; k++) {
        const c0 = { ...gpu.counters };
        const f = await op.forward(x);
        const c1 = { ...gpu.counters };
        const g = await op.backward(dout);
        const c2 = { ...gpu.counters };
        expect(c1.buffersCreated - c0.buffersCreated).toBe(0);
        expect(c2.buffersCreated - c1.buffersCreated).toBe(0);
        expect(c1.submits - c0.submits).toBe(1);
        expect(c2.submits - c1.submits).toBe(1);
        runs.push([f.out, f.selection, f.oCmp, f.oSel, f.oWin, ...Object.values(g)].map((a) => new Uint32Array(a.buffer.slice(0))));
      }
      runs[0].forEach((a, i) => expect(runs[1][i]).toEqual(a));
    } finally {
      op.destroy();
    }
  });

  it('names a wrong input length; backward needs a forward first; no use after destroy', async () => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, shape, BASE);
    const x = randomInputs(shape, 5);
    await expect(op.backward(new Float32Array(shape.B * shape.T * shape.H * shape.dv))).rejects.toThrow(/call forward first/);
    await expect(op.forward({ ...x, vSel: x.vSel.subarray(1) })).rejects.toThrow(/vSel has \d+ values, expected/);
    await op.forward(x);
    await expect(op.backward(new Float32Array(3))).rejects.toThrow(/dout has 3 values/);
    op.destroy();
    await expect(op.forward(x)).rejects.toThrow(/after destroy/);
  });

  it('bind: the same op on caller-owned slices, encoded by the caller, matches the host API bit for bit', async () => {
    const gpu = await getGpu();
    const op = await NsaOp.create(gpu, shape, BASE);
    const x = randomInputs(shape, 9);
    const dout = f32(randn(shape.B * shape.T * shape.H * shape.dv, rng(10)));
    const want = await op.forward(x);
    const wantG = await op.backward(dout);
    op.destroy();
    const z = nsaOpTensorSizes(shape, BASE);
    const sizes: Record<string, number> = { ...z.inputs, out: z.out, ...z.grads };
    const arena = createArena(
      gpu,
      'caller',
      Object.entries(sizes).map(([name, n]) => ({ name, bytes: 4 * n })),
    );
    const a = (k: string) => arena.get(k);
    const inputs = {
      q: a('q'),
      kCmp: a('kCmp'),
      vCmp: a('vCmp'),
      kSel: a('kSel'),
      vSel: a('vSel'),
      kWin: a('kWin'),
      vWin: a('vWin'),
      gates: a('gates'),
    };
    const grads = {
      dout: a('dout'),
      dq: a('dq'),
      dkCmp: a('dkCmp'),
      dvCmp: a('dvCmp'),
      dkSel: a('dkSel'),
      dvSel: a('dvSel'),
      dkWin: a('dkWin'),
      dvWin: a('dvWin'),
      dgates: a('dgates'),
    };
    await expect(NsaOp.bind(gpu, shape, BASE, { inputs, out: a('q'), grads })).rejects.toThrow(/q and out overlap|out holds/);
    const bound = await NsaOp.bind(gpu, shape, BASE, { inputs, out: a('out'), grads });
    for (const [k, v] of Object.entries(x)) gpu.write(a(k), v as Float32Array);
    gpu.write(a('dout'), dout);
    const before = gpu.counters.buffersCreated;
    gpu.run([...bound.forward, ...bound.backward]); // one pass, one submit
    expect(gpu.counters.buffersCreated).toBe(before);
    expect(new Uint32Array((await gpu.readF32(a('out'), z.out)).buffer)).toEqual(new Uint32Array(want.out.buffer));
    expect(await gpu.readI32(bound.saved.sel, z.selection)).toEqual(want.selection);
    for (const k of ['dq', 'dkCmp', 'dvCmp', 'dkSel', 'dvSel', 'dkWin', 'dvWin', 'dgates'] as const) {
      expect(new Uint32Array((await gpu.readF32(a(k), z.grads[k])).buffer), k).toEqual(new Uint32Array(wantG[k].buffer));
    }
    bound.destroy();
    arena.buffers.forEach((b) => b.destroy());
    expect(gpu.reports).toEqual([]);
  });
});
