// The GPU decode's split attention (shaders/decode_attend.wgsl: attendPart, attendCombine) against
// its float64 twin (src/reference/decode-attend.ts) on random shapes, every branch, with the edge
// cases of the split: one key (t = 0), one chunk, a key count not a multiple of the chunks, an exact
// multiple (chunk boundaries), more chunks than keys (empty chunks), no key at all (the compressed
// branch before its first block), a wrapping window ring, selections padded with −1, dv > the
// workgroup's 64 lanes; one-token selections (DSA's: the direct path). Partials (max, sum, acc) and outputs rel RMS ≤ 1e-5 (f32 against f64, sums
// of ≤ 101 terms); keys read equal; two runs equal bit for bit.
import { describe, expect, it } from 'vitest';

import { createLayoutArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { attendPartialsLength, decodeAttendDispatches, decodeParams } from '../../src/kernels/decode';
import { attendCombine, attendPartials } from '../../src/reference/decode-attend';
import { randn, relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const TOL = 1e-5;
const NEG_BIG = Math.fround(-3.0e38);

interface Case {
  name: string;
  branch: 0 | 1 | 2 | 3;
  B: number;
  H: number;
  G: number;
  dk: number;
  dv: number;
  cap: number;
  t: number;
  splits: number;
  l?: number;
  d?: number;
  lSel?: number;
  nSel?: number;
  w?: number;
}

const CASES: Case[] = [
  { name: 'dense, t = 0 (one key) in 4 chunks (3 empty)', branch: 3, B: 1, H: 2, G: 1, dk: 8, dv: 8, cap: 8, t: 0, splits: 4 },
  { name: 'dense, one chunk, t = 37', branch: 3, B: 2, H: 4, G: 2, dk: 12, dv: 20, cap: 40, t: 37, splits: 1 },
  { name: 'dense, 101 keys in 7 chunks (not a multiple)', branch: 3, B: 1, H: 3, G: 1, dk: 16, dv: 72, cap: 128, t: 100, splits: 7 },
  { name: 'dense, 64 keys in 8 chunks (exact boundaries)', branch: 3, B: 2, H: 2, G: 2, dk: 8, dv: 16, cap: 64, t: 63, splits: 8 },
  { name: 'window ring w 16 wrapped at t 40, 3 chunks', branch: 2, B: 2, H: 4, G: 2, dk: 8, dv: 12, cap: 64, t: 40, splits: 3, w: 16 },
  { name: 'window, t < w, 5 chunks', branch: 2, B: 1, H: 2, G: 1, dk: 4, dv: 8, cap: 32, t: 6, splits: 5, w: 16 },
  {
    name: 'selected blocks (l′ 8, n 4, −1 padded), 5 chunks',
    branch: 1,
    B: 2,
    H: 4,
    G: 2,
    dk: 8,
    dv: 8,
    cap: 48,
    t: 45,
    splits: 5,
    lSel: 8,
    nSel: 4,
  },
  {
    name: 'compressed (l 8, d 4): 6 blocks in 4 chunks',
    branch: 0,
    B: 1,
    H: 4,
    G: 2,
    dk: 8,
    dv: 12,
    cap: 32,
    t: 30,
    splits: 4,
    l: 8,
    d: 4,
  },
  { name: 'compressed before its first block: no key', branch: 0, B: 1, H: 2, G: 1, dk: 4, dv: 4, cap: 32, t: 5, splits: 3, l: 8, d: 4 },
  // One-token blocks (l′ 1, DSA's selection): the direct path (key o = sel[row + o], the keys found by binary search).
  {
    name: 'selected tokens (l′ 1): 38–39 of k 40 (−1 padded), 6 chunks, dv 72',
    branch: 1,
    B: 2,
    H: 4,
    G: 2,
    dk: 8,
    dv: 72,
    cap: 80,
    t: 69,
    splits: 6,
    lSel: 1,
    nSel: 40,
  },
  {
    name: 'selected tokens (l′ 1): 2–3 keys in 7 chunks (empty ones)',
    branch: 1,
    B: 2,
    H: 2,
    G: 1,
    dk: 4,
    dv: 8,
    cap: 16,
    t: 2,
    splits: 7,
    lSel: 1,
    nSel: 5,
  },
  { name: 'selected tokens (l′ 1): t = 0, one key', branch: 1, B: 1, H: 2, G: 2, dk: 4, dv: 4, cap: 8, t: 0, splits: 2, lSel: 1, nSel: 3 },
];

const ncmp = (t: number, l: number, d: number) => (t + 1 < l ? 0 : Math.floor((t + 1 - l) / d) + 1);

async function runCase(gpu: GpuContext, c: Case, seed: number) {
  const r = rng(seed);
  const { B, H, G, dk, dv, cap, t, splits } = c;
  const hpg = H / G;
  const l = c.l ?? 1;
  const d = c.d ?? 1;
  const lSel = c.lSel ?? 1;
  const nSel = c.nSel ?? 1;
  const w = c.w ?? 1;
  const Nmax = Math.max(1, ncmp(cap - 1, l, d));
  const rows = c.branch === 0 ? Nmax : c.branch === 2 ? Math.min(w, cap) : cap;
  const q = Float32Array.from(randn(B * H * dk, r));
  const k = Float32Array.from(randn(B * rows * G * dk, r));
  const v = Float32Array.from(randn(B * rows * G * dv, r));
  // Selection: per (b, g) distinct blocks ≤ t / l′, ascending, the rest −1.
  const sel = new Int32Array(B * G * nSel).fill(-1);
  if (c.branch === 1) {
    for (let bg = 0; bg < B * G; bg++) {
      const last = Math.floor(t / lSel);
      const pool = Array.from({ length: last }, (_, j) => j).sort(() => r() - 0.5);
      const picked = [last, ...pool.slice(0, nSel - 2 - (bg % 2))].sort((a, b) => a - b);
      picked.forEach((j, i) => (sel[bg * nSel + i] = j));
    }
  }
  // The compressed branch's weights p_cmp in the scratch rows.
  const scratch = new Float32Array(B * H * cap);
  if (c.branch === 0) for (let i = 0; i < scratch.length; i++) scratch[i] = r();
  // Positions of each (b, g)'s keys in order.
  const positions = (bg: number): number[] => {
    if (c.branch === 0) return Array.from({ length: ncmp(t, l, d) }, (_, i) => i);
    if (c.branch === 2) return Array.from({ length: Math.min(w, t + 1) }, (_, i) => t + 1 - Math.min(w, t + 1) + i);
    if (c.branch === 3) return Array.from({ length: t + 1 }, (_, i) => i);
    const out: number[] = [];
    for (let m = 0; m < nSel; m++) {
      const j = sel[bg * nSel + m];
      if (j < 0) continue;
      for (let s = j * lSel; s < Math.min((j + 1) * lSel, t + 1); s++) out.push(s);
    }
    return out;
  };
  const partLen = attendPartialsLength(B, H, splits, dv);
  const { arena, tensors: x } = createLayoutArena(gpu, 'attend-split', (place) => ({
    st: place('st', 4),
    q: place('q', q.length),
    k: place('k', k.length),
    v: place('v', v.length),
    out: place('out', B * H * dv),
    scratch: place('scratch', scratch.length),
    sel: place('sel', sel.length),
    reads: place('reads', B * G * 4),
    part: place('part', partLen),
  }));
  gpu.write(x.st, new Uint32Array([t, 0, 0, 0]));
  gpu.write(x.q, q);
  gpu.write(x.k, k);
  gpu.write(x.v, v);
  gpu.write(x.scratch, scratch);
  gpu.write(x.sel, sel);
  gpu.write(x.reads, new Uint32Array(B * G * 4));
  const P = decodeParams(
    { B, H, G, hpg, dk, dv, cap, Nmax, l, d, lSel, nSel, w, scale: 1 / Math.sqrt(dk) },
    { branch: c.branch, rows, splits, slot: 0, rslot: 0 },
  );
  const list = await decodeAttendDispatches(gpu, P, x, `attend ${c.name}`);
  const read = async () => {
    gpu.run(list);
    return {
      out: await gpu.readF32(x.out),
      part: await gpu.readF32(x.part, partLen),
      reads: new Uint32Array((await gpu.read(x.reads)).slice(0)),
    };
  };
  const first = await read();
  const second = await read();
  // Twin.
  const wantPart: number[] = [];
  const gotPart: number[] = [];
  const wantOut: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / hpg);
      const ps = positions(b * G + g);
      const row = (s: number) => (b * rows + (s % rows)) * G + g;
      const keys = ps.map((s) => k.subarray(row(s) * dk, (row(s) + 1) * dk));
      const vals = ps.map((s) => v.subarray(row(s) * dv, (row(s) + 1) * dv));
      const bh = b * H + h;
      const weights = c.branch === 0 ? scratch.subarray(bh * cap, bh * cap + ps.length) : undefined;
      const parts = attendPartials(q.subarray(bh * dk, (bh + 1) * dk), keys, vals, dv, 1 / Math.sqrt(dk), splits, weights);
      parts.forEach((p, s) => {
        const o = (bh * splits + s) * (dv + 3);
        expect(first.part[o + 2], `${c.name}: keys of chunk ${s}`).toBe(p.keys);
        if (p.keys === 0) {
          expect([first.part[o], first.part[o + 1]]).toEqual([NEG_BIG, 0]);
          expect(Array.from(first.part.subarray(o + 3, o + 3 + dv)).every((a) => a === 0)).toBe(true);
          return;
        }
        wantPart.push(p.m, p.l, ...p.acc);
        gotPart.push(...first.part.subarray(o, o + 2), ...first.part.subarray(o + 3, o + 3 + dv));
      });
      const { out, keys: n } = attendCombine(parts, c.branch === 0, dv);
      wantOut.push(...out);
      if (h % hpg === 0) expect(first.reads[(b * G + g) * 4 + c.branch], `${c.name}: keys read`).toBe(n);
    }
  }
  if (wantPart.length) expect(relRms(gotPart, wantPart), `${c.name}: partials`).toBeLessThanOrEqual(TOL);
  if (wantOut.some((a) => a !== 0)) expect(relRms(first.out, wantOut), `${c.name}: output`).toBeLessThanOrEqual(TOL);
  else expect(Array.from(first.out).every((a) => a === 0)).toBe(true);
  expect(second.out).toEqual(first.out);
  expect(second.part).toEqual(first.part);
  for (const buf of arena.buffers) buf.destroy();
}

describe('GPU decode split attention = float64 twin (partials and output rel RMS ≤ 1e-5, keys read equal, deterministic)', () => {
  CASES.forEach((c, i) => {
    it(c.name, async () => {
      const gpu = await getGpu();
      await runCase(gpu, c, 100 + i);
    });
  });
});
