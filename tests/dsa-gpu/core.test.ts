// The DSA attention of one layer on the GPU (src/model/dsa/core.ts) vs the float64 twin, both
// phases, batched: out and lse ≤ 1e-5 rel RMS (warm-up: dense attention; sparse: over the
// selection through NSA's selected branch with one-token blocks), the selection exactly the twin's,
// klRows ≤ 1e-5; the indexer's dqI, dkI, dwI and (sparse) the main dq, dk, dv ≤ 1e-4 against the
// twin's whole chain (f32 vs f64 through two kernels, CONVENTIONS' backward bound); in the sparse
// phase the main K/V rows read, counted in the kernel, are min(k, t + 1) per group, and a second
// run gives the same bits.
import { describe, expect, it } from 'vitest';

import { type DsaConfig, dsaKeysRead, type DsaPhase } from '../../src/definitions/dsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { createLayoutArena, type PlaceTensor } from '../../src/gpu/arena';
import { dsaBackwardDispatches, dsaForwardDispatches, dsaSavedTensors, dsaScratchTensors } from '../../src/model/dsa/core';
import { dsaAttentionBackwardRef, dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { denseSlots, indexerBackwardRef, indexScoresRef, selectedSlots } from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const F = (a: ArrayLike<number>) => new Float64Array(Float32Array.from(a));
const seq = (a: ArrayLike<number>, b: number, n: number) => new Float64Array(Array.from(a).slice(b * n, (b + 1) * n));
const cat = (parts: ArrayLike<number>[]) => Float64Array.from(parts.flatMap((p) => Array.from(p)));

const CASES: { name: string; s: AttentionShape; cfg: DsaConfig }[] = [
  {
    name: 'B=2 T=11 H=4 G=2 H_I=2 d_I=4 k=4',
    s: { B: 2, T: 11, H: 4, G: 2, dk: 4, dv: 3 },
    cfg: { indexHeads: 2, indexDim: 4, topK: 4, warmupSteps: 1, lossWeight: 0.5 },
  },
  {
    name: 'T < k: B=1 T=6 H=2 G=1 k=9',
    s: { B: 1, T: 6, H: 2, G: 1, dk: 4, dv: 4 },
    cfg: { indexHeads: 1, indexDim: 2, topK: 9, warmupSteps: 1, lossWeight: 1 },
  },
];

describe('DSA layer attention on the GPU vs the twin', () => {
  it.each(CASES)('$name', async ({ s, cfg }) => {
    const gpu = await getGpu();
    const { B, T, H, G, dk, dv } = s;
    const HI = cfg.indexHeads;
    const dI = cfg.indexDim;
    const r = rng(T * 5 + cfg.topK);
    const x = {
      q: F(randn(B * T * H * dk, r)),
      k: F(randn(B * T * G * dk, r)),
      v: F(randn(B * T * G * dv, r)),
      qI: F(randn(B * T * HI * dI, r)),
      kI: F(randn(B * T * dI, r)),
      wI: F(randn(B * T * HI, r)),
      dout: F(randn(B * T * H * dv, r)),
    };
    const layout = (place: PlaceTensor) => ({
      q: place('q', x.q.length),
      k: place('k', x.k.length),
      v: place('v', x.v.length),
      qI: place('qI', x.qI.length),
      kI: place('kI', x.kI.length),
      wI: place('wI', x.wI.length),
      dout: place('dout', x.dout.length),
      out: place('out', B * T * H * dv),
      lse: place('lse', B * H * T),
      delta: place('delta', B * H * T),
      dq: place('dq', B * T * H * dk),
      dk: place('dk', B * T * G * dk),
      dv: place('dv', B * T * G * dv),
      dqI: place('dqI', B * T * HI * dI),
      dkI: place('dkI', B * T * dI),
      dwI: place('dwI', B * T * HI),
      keysRead: place('keysRead', B * T * G),
      saved: dsaSavedTensors(place, 'dsa.', s, cfg),
      scratch: dsaScratchTensors(place, 'dsa.', s, cfg),
    });
    const { tensors: t } = createLayoutArena(gpu, 'dsa-core-test', layout);
    for (const n of ['q', 'k', 'v', 'qI', 'kI', 'wI', 'dout'] as const) gpu.write(t[n], new Float32Array(x[n]));
    const io = { q: t.q, k: t.k, v: t.v, out: t.out, lse: t.lse, qI: t.qI, kI: t.kI, wI: t.wI, saved: t.saved };
    const gradScale = cfg.lossWeight / (B * T);
    const one = { T, H, G, dk, dv };
    const d = { T, indexHeads: HI, indexDim: dI };
    for (const phase of ['warmup', 'sparse'] as DsaPhase[]) {
      const main = { dout: t.dout, delta: t.delta, dq: t.dq, dk: t.dk, dv: t.dv };
      gpu.run([
        ...(await dsaForwardDispatches(gpu, cfg, s, phase, { ...io, keysRead: phase === 'sparse' ? t.keysRead : undefined })),
        ...(await dsaBackwardDispatches(gpu, cfg, s, phase, io, t.scratch, { gradScale, dqI: t.dqI, dkI: t.dkI, dwI: t.dwI, main })),
      ]);
      const want: Record<string, Float64Array[]> = { out: [], lse: [], klRows: [], dqI: [], dkI: [], dwI: [], dq: [], dk: [], dv: [] };
      const sels: number[] = [];
      for (let b = 0; b < B; b++) {
        const y = (a: Float64Array, n: number) => seq(a, b, n);
        const [q, k, v] = [y(x.q, T * H * dk), y(x.k, T * G * dk), y(x.v, T * G * dv)];
        const [qI, kI, wI] = [y(x.qI, T * HI * dI), y(x.kI, T * dI), y(x.wI, T * HI)];
        const I = indexScoresRef(qI, kI, wI, d);
        const sel = selectTokensRef(I, T, G, cfg.topK);
        sels.push(...sel);
        const useSel = phase === 'warmup' ? selectTokensRef(I, T, G, T) : sel;
        const kUsed = phase === 'warmup' ? T : cfg.topK;
        const fwd = dsaAttentionForwardRef(q, k, v, useSel, one, kUsed);
        const slots = phase === 'warmup' ? denseSlots(T) : selectedSlots(sel, G, cfg.topK);
        const kl = indexerKlRef(q, k, fwd.lse, I, slots, one, gradScale);
        const gi = indexerBackwardRef(qI, kI, wI, kl.dI, slots, d);
        const gm = dsaAttentionBackwardRef(q, k, v, useSel, fwd, y(x.dout, T * H * dv), one, kUsed);
        for (const [n, a] of [
          ['out', fwd.o],
          ['lse', fwd.lse],
          ['klRows', kl.klRows],
          ['dqI', gi.dqI],
          ['dkI', gi.dkI],
          ['dwI', gi.dwI],
          ['dq', gm.dq],
          ['dk', gm.dK],
          ['dv', gm.dV],
        ] as const)
          want[n].push(a);
      }
      expect(Array.from(await gpu.readI32(t.saved.sel)).slice(0, sels.length), `${phase} sel`).toEqual(sels);
      expectClose(`${phase} out`, await gpu.readF32(t.out), cat(want.out), 1e-5);
      expectClose(`${phase} lse`, await gpu.readF32(t.lse), cat(want.lse), 1e-5);
      expectClose(`${phase} klRows`, (await gpu.readF32(t.scratch.klRows)).slice(0, B * T), cat(want.klRows), 1e-5);
      for (const n of ['dqI', 'dkI', 'dwI'] as const) expectClose(`${phase} ${n}`, await gpu.readF32(t[n]), cat(want[n]), 1e-4);
      if (phase === 'sparse') {
        for (const n of ['dq', 'dk', 'dv'] as const) expectClose(`${phase} ${n}`, await gpu.readF32(t[n]), cat(want[n]), 1e-4);
        // Keys read, counted in the kernel: min(k, t + 1) main K/V rows per (b, t, group).
        const counted = new Uint32Array((await gpu.readI32(t.keysRead, B * T * G)).buffer);
        for (let i = 0; i < B * T * G; i++) expect(counted[i], `keys read row ${i}`).toBe(dsaKeysRead(Math.floor(i / G) % T, cfg.topK));
        // Deterministic: the same step again gives the same bits everywhere.
        const tensors = [t.out, t.lse, t.saved.sel, t.scratch.klRows, t.dqI, t.dkI, t.dwI, t.dq, t.dk, t.dv] as const;
        const first = await Promise.all(tensors.map((x) => gpu.readI32(x)));
        gpu.run([
          ...(await dsaForwardDispatches(gpu, cfg, s, phase, io)),
          ...(await dsaBackwardDispatches(gpu, cfg, s, phase, io, t.scratch, { gradScale, dqI: t.dqI, dkI: t.dkI, dwI: t.dwI, main })),
        ]);
        const again = await Promise.all(tensors.map((x) => gpu.readI32(x)));
        for (let j = 0; j < tensors.length; j++)
          expect(Array.from(again[j]), `tensor ${j} bits on a second run`).toEqual(Array.from(first[j]));
      }
    }
  });
});
