// The GPU decode's split matrix-vector product (shaders/decode_matvec.wgsl: matvecPart,
// matvecCombine, through matvecDispatch) against its float64 twin (src/reference/decode-matvec.ts)
// on random shapes: K not a multiple of the chunks, exact chunk boundaries, more chunks than inputs
// (empty chunks), one chunk (decode_rows.wgsl's matvec), N not a multiple of the 64-lane tiles,
// several rows, W stored [N, K], and the residual add. Partials and outputs rel RMS ≤ 1e-5 (f32
// against f64); two runs equal bit for bit. A product group (matvecGroupDispatch: several products
// of one x in one part + combine) against its twin (matvecGroupPartials, matvecGroupCombine): members
// straddling 64-output tiles, one member, empty chunks, one chunk, several rows, weights and
// outputs out of order with other tensors between them (left untouched); each member's output equal
// bit for bit to its own matvecDispatch with the same chunks; the gated group (w1, w3 with the
// SwiGLU in the combine) against matvecGroupGated and equal bit for bit to the two products then
// swiglu.wgsl's forward; bad groups rejected before GPU work. Also the grouped K/V append
// (appendKVGroupDispatch: NSA's three KV sets in one dispatch) against its float64 twin
// (src/reference/decode-append.ts, rel RMS ≤ 1e-5; rows other than t mod rows untouched) and equal
// bit for bit to one appendKV per set: t = 0, a window ring that wraps, B 2 × G 2.
import { describe, expect, it } from 'vitest';

import { createLayoutArena, type PlaceTensor } from '../../src/gpu/arena';
import { KernelArgumentError } from '../../src/gpu/checks';
import {
  appendKVGroupDispatch,
  appendTableWords,
  decodeParams,
  decodeRowsDispatch,
  matvecDispatch,
  matvecGroupDispatch,
  matvecGroupPartialsLength,
  matvecGroupTableWords,
  matvecPartialsLength,
  matvecSplits,
} from '../../src/kernels/decode';
import { ropeTable } from '../../src/kernels/rope';
import { swigluForwardDispatch } from '../../src/kernels/swiglu';
import { appendKvRow } from '../../src/reference/decode-append';
import {
  matvecCombine,
  matvecGroupCombine,
  matvecGroupGated,
  matvecGroupPartials,
  matvecPartials,
} from '../../src/reference/decode-matvec';
import { randn, relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const TOL = 1e-5;

interface Case {
  name: string;
  rows: number;
  K: number;
  N: number;
  splits: number;
  transW?: boolean;
  accumulate?: boolean;
}

const CASES: Case[] = [
  { name: 'K 100 in 7 chunks (not a multiple), N 70', rows: 1, K: 100, N: 70, splits: 7 },
  { name: 'K 64 in 4 chunks (exact), N 130, 2 rows, residual add', rows: 2, K: 64, N: 130, splits: 4, accumulate: true },
  { name: 'W stored [N, K], 3 rows, 3 chunks', rows: 3, K: 48, N: 20, splits: 3, transW: true },
  { name: 'K 5 in 8 chunks (3 empty)', rows: 1, K: 5, N: 8, splits: 8 },
  { name: 'one chunk (decode_rows matvec), residual add', rows: 2, K: 33, N: 17, splits: 1, accumulate: true },
];

describe('GPU decode split matvec = float64 twin (partials and outputs rel RMS ≤ 1e-5, deterministic)', () => {
  CASES.forEach((c, i) => {
    it(c.name, async () => {
      const gpu = await getGpu();
      const r = rng(300 + i);
      const { rows, K, N, splits } = c;
      const x = Float32Array.from(randn(rows * K, r));
      const W = Float32Array.from(randn(K * N, r));
      const prior = Float32Array.from(randn(rows * N, r));
      const partLen = Math.max(1, matvecPartialsLength(rows, N, splits));
      const { arena, tensors: t } = createLayoutArena(gpu, 'matvec-split', (place) => ({
        st: place('st', 4),
        x: place('x', x.length),
        W: place('W', W.length),
        out: place('out', rows * N),
        part: place('part', partLen),
      }));
      gpu.write(t.x, x);
      gpu.write(t.W, W);
      const list = await matvecDispatch(gpu, {
        st: t.st,
        x: t.x,
        W: t.W,
        out: t.out,
        rows,
        K,
        N,
        transW: c.transW,
        accumulate: c.accumulate,
        splits,
        part: t.part,
        label: c.name,
      });
      expect(list.length).toBe(splits > 1 ? 2 : 1);
      const run = async () => {
        gpu.write(t.out, prior);
        gpu.run(list);
        return { out: await gpu.readF32(t.out), part: await gpu.readF32(t.part, partLen) };
      };
      const first = await run();
      const second = await run();
      const part = matvecPartials(x, W, rows, K, N, splits, c.transW);
      const want = matvecCombine(part, rows * N, splits, c.accumulate ? prior : undefined);
      if (splits > 1) {
        expect(relRms(first.part, part), 'partials').toBeLessThanOrEqual(TOL);
        const empty = Array.from({ length: splits }, (_, s) => s).filter((s) => Math.min(K, s * Math.ceil(K / splits)) >= K);
        for (const s of empty) expect(Array.from(first.part.subarray(s * rows * N, (s + 1) * rows * N)).every((v) => v === 0)).toBe(true);
      }
      expect(relRms(first.out, want), 'output').toBeLessThanOrEqual(TOL);
      expect(second.out).toEqual(first.out);
      for (const b of arena.buffers) b.destroy();
    });
  });

  it('matvecSplits: chunks of ≥ 4 inputs, at most 64, ≥ 1,024 workgroups where those allow, 1 when the outputs fill it', () => {
    expect(matvecSplits(2048, 768)).toBe(64); // 12 tiles × 64 = 768
    expect(matvecSplits(768, 2048)).toBe(32); // 32 tiles × 32 = 1,024
    expect(matvecSplits(768, 128)).toBe(64); // 2 tiles × 64 = 128
    expect(matvecSplits(40, 128)).toBe(10); // K / 4
    expect(matvecSplits(768, 50257)).toBe(2);
    expect(matvecSplits(768, 65536 * 2)).toBe(1);
    expect(matvecSplits(10, 4)).toBe(2);
    expect(matvecSplits(3, 4)).toBe(1);
  });
});

interface GroupCase {
  name: string;
  rows: number;
  K: number;
  Ns: number[];
  splits: number;
}

const GROUP_CASES: GroupCase[] = [
  { name: 'q, k, v, gates of a small layer: N 64 + 24 + 24 + 9, K 40 in 6 chunks', rows: 1, K: 40, Ns: [64, 24, 24, 9], splits: 6 },
  { name: 'members straddling tiles (70 + 5 + 100), 2 rows, K 33 in 4 chunks', rows: 2, K: 33, Ns: [70, 5, 100], splits: 4 },
  { name: 'one member, 3 rows', rows: 3, K: 20, Ns: [30], splits: 3 },
  { name: 'K 5 in 8 chunks (3 empty), 8 members of 1 to 8 outputs', rows: 1, K: 5, Ns: [1, 2, 3, 4, 5, 6, 7, 8], splits: 8 },
  { name: 'one chunk, 2 rows', rows: 2, K: 17, Ns: [3, 65], splits: 1 },
];

describe('GPU decode product group = float64 twin (rel RMS ≤ 1e-5), = each product alone bit for bit', () => {
  GROUP_CASES.forEach((c, i) => {
    it(c.name, async () => {
      const gpu = await getGpu();
      const r = rng(400 + i);
      const { rows, K, Ns, splits } = c;
      const M = Ns.length;
      const N = Ns.reduce((a, b) => a + b, 0);
      const x = Float32Array.from(randn(rows * K, r));
      const Ws = Ns.map((Nj) => Float32Array.from(randn(K * Nj, r)));
      const tab = 4;
      // Weights and outputs placed in reverse member order, a guard tensor after each.
      const { arena, tensors: t } = createLayoutArena(gpu, 'matvec-group', (place) => {
        const st = place('st', tab + matvecGroupTableWords(M));
        const x_ = place('x', x.length);
        const part = place('part', matvecGroupPartialsLength(rows, N, splits));
        const W = new Array<ReturnType<typeof place>>(M);
        const out = new Array<ReturnType<typeof place>>(M);
        const guards: ReturnType<typeof place>[] = [];
        for (let j = M - 1; j >= 0; j--) {
          W[j] = place(`W${j}`, K * Ns[j]);
          guards.push(place(`wg${j}`, 8));
        }
        for (let j = M - 1; j >= 0; j--) {
          out[j] = place(`out${j}`, rows * Ns[j]);
          if (j > 0) guards.push(place(`og${j}`, 8));
        }
        const single = Ns.map((Nj, j) => place(`single${j}`, rows * Nj));
        const singlePart = place('singlePart', Math.max(1, matvecPartialsLength(rows, Math.max(...Ns), splits)));
        return { st, x: x_, part, W, out, guards, single, singlePart };
      });
      gpu.write(t.x, x);
      Ws.forEach((W, j) => gpu.write(t.W[j], W));
      const guard = new Float32Array(8).fill(7.5);
      for (const g of t.guards) gpu.write(g, guard);
      const members = Ns.map((Nj, j) => ({ W: t.W[j], out: t.out[j], N: Nj }));
      const list = await matvecGroupDispatch(gpu, { st: t.st, tab, x: t.x, rows, K, members, splits, part: t.part, label: c.name });
      expect(list.length).toBe(2);
      const run = async () => {
        gpu.run(list);
        return { outs: await Promise.all(t.out.map((o) => gpu.readF32(o))), part: await gpu.readF32(t.part) };
      };
      const first = await run();
      const second = await run();
      const part = matvecGroupPartials(
        x,
        Ws.map((W, j) => ({ W, N: Ns[j] })),
        rows,
        K,
        splits,
      );
      const want = matvecGroupCombine(part, rows, Ns, splits);
      expect(relRms(first.part, part), 'partials').toBeLessThanOrEqual(TOL);
      first.outs.forEach((o, j) => expect(relRms(o, want[j]), `member ${j}`).toBeLessThanOrEqual(TOL));
      expect(second.outs).toEqual(first.outs);
      for (const g of t.guards) expect(Array.from(await gpu.readF32(g))).toEqual(Array.from(guard));
      // Each member alone with the same chunks: the same sums in the same order, the same bits.
      for (let j = 0; j < M; j++) {
        const alone = await matvecDispatch(gpu, {
          st: t.st,
          x: t.x,
          W: t.W[j],
          out: t.single[j],
          rows,
          K,
          N: Ns[j],
          splits,
          part: t.singlePart,
          label: `${c.name} alone ${j}`,
        });
        gpu.run(alone);
        expect(await gpu.readF32(t.single[j]), `member ${j} alone`).toEqual(first.outs[j]);
      }
      for (const b of arena.buffers) b.destroy();
    });
  });

  for (const [gi, g] of [
    { rows: 1, K: 40, N0: 70, splits: 5 },
    { rows: 2, K: 9, N0: 33, splits: 3 },
    { rows: 1, K: 3, N0: 5, splits: 1 },
  ].entries())
    it(`gated (SwiGLU in the combine): ${g.rows} row(s), K ${g.K} in ${g.splits} chunk(s), N 2 × ${g.N0}`, async () => {
      const gpu = await getGpu();
      const r = rng(500 + gi);
      const { rows, K, N0, splits } = g;
      // Large inputs so that silu's negative side (σ of a very negative sum) is exercised.
      const x = Float32Array.from(randn(rows * K, r), (v) => 3 * v);
      const W1 = Float32Array.from(randn(K * N0, r));
      const W3 = Float32Array.from(randn(K * N0, r));
      const { arena, tensors: t } = createLayoutArena(gpu, 'matvec-gated', (place) => ({
        st: place('st', 4 + matvecGroupTableWords(2)),
        x: place('x', x.length),
        part: place('part', matvecGroupPartialsLength(rows, 2 * N0, splits)),
        W1: place('W1', W1.length),
        W3: place('W3', W3.length),
        h: place('h', rows * N0),
        a: place('a', rows * N0),
        b: place('b', rows * N0),
        h2: place('h2', rows * N0),
      }));
      gpu.write(t.x, x);
      gpu.write(t.W1, W1);
      gpu.write(t.W3, W3);
      const members = [
        { W: t.W1, N: N0 },
        { W: t.W3, N: N0 },
      ];
      const base = { st: t.st, tab: 4, x: t.x, rows, K, splits, part: t.part, label: 'gated' };
      const list = await matvecGroupDispatch(gpu, { ...base, members, gated: t.h });
      gpu.run(list);
      const h = await gpu.readF32(t.h);
      const want = matvecGroupGated(
        matvecGroupPartials(
          x,
          [
            { W: W1, N: N0 },
            { W: W3, N: N0 },
          ],
          rows,
          K,
          splits,
        ),
        rows,
        N0,
        splits,
      );
      expect(relRms(h, want)).toBeLessThanOrEqual(TOL);
      gpu.run(list);
      expect(await gpu.readF32(t.h)).toEqual(h);
      // The same products ungrouped, then the SwiGLU kernel: the same bits.
      const plain = await matvecGroupDispatch(gpu, {
        ...base,
        members: [
          { W: t.W1, out: t.a, N: N0 },
          { W: t.W3, out: t.b, N: N0 },
        ],
      });
      gpu.run([...plain, await swigluForwardDispatch(gpu, { a: t.a, b: t.b, out: t.h2, n: rows * N0 })]);
      expect(await gpu.readF32(t.h2)).toEqual(h);
      await expect(matvecGroupDispatch(gpu, { ...base, members: [members[0]], gated: t.h })).rejects.toThrow(/equal N/);
      for (const b of arena.buffers) b.destroy();
    });

  it('rejects weights in two buffers, overlapping outputs and a table past st, before any GPU work', async () => {
    const gpu = await getGpu();
    const mk = () =>
      createLayoutArena(gpu, 'matvec-group-bad', (place) => ({
        st: place('st', 8),
        x: place('x', 4),
        part: place('part', 64),
        W: place('W', 16),
        out: place('out', 8),
      }));
    const a = mk();
    const b = mk();
    const t = a.tensors;
    const base = { st: t.st, tab: 4, x: t.x, rows: 1, K: 4, splits: 2, part: t.part, label: 'bad group' };
    await expect(
      matvecGroupDispatch(gpu, {
        ...base,
        members: [
          { W: t.W, out: t.out, N: 4 },
          { W: b.tensors.W, out: { ...t.out, offset: t.out.offset + 16, size: 16 }, N: 4 },
        ],
      }),
    ).rejects.toThrow(/not in one buffer/);
    await expect(
      matvecGroupDispatch(gpu, {
        ...base,
        members: [
          { W: t.W, out: t.out, N: 4 },
          { W: t.W, out: t.out, N: 4 },
        ],
      }),
    ).rejects.toThrow(KernelArgumentError);
    await expect(matvecGroupDispatch(gpu, { ...base, tab: 6, members: [{ W: t.W, out: t.out, N: 4 }] })).rejects.toThrow(
      KernelArgumentError,
    );
    for (const x of [a, b]) for (const buf of x.arena.buffers) buf.destroy();
  });
});

describe('GPU decode grouped K/V append = float64 twin (rel RMS ≤ 1e-5) = one appendKV per set, bit for bit', () => {
  for (const [ci, c] of [
    { name: 't 0, three sets of 6 rows', B: 1, G: 1, dk: 4, dv: 3, rows: [6, 6, 6], t: 0 },
    { name: 'B 2 × G 2, window ring of 3 wrapping at t 7', B: 2, G: 2, dk: 6, dv: 5, rows: [9, 9, 3], t: 7 },
    { name: 'two sets, last row', B: 1, G: 2, dk: 2, dv: 2, rows: [5, 2], t: 4 },
  ].entries())
    it(c.name, async () => {
      const gpu = await getGpu();
      const r = rng(600 + ci);
      const { B, G, dk, dv, t } = c;
      const S = c.rows.length;
      const cap = 10;
      const table = ropeTable(cap, dk, 10000);
      const k = c.rows.map(() => Float32Array.from(randn(B * G * dk, r)));
      const v = c.rows.map(() => Float32Array.from(randn(B * G * dv, r)));
      const kc0 = c.rows.map((rows) => Float32Array.from(randn(B * rows * G * dk, r)));
      const vc0 = c.rows.map((rows) => Float32Array.from(randn(B * rows * G * dv, r)));
      const place2 = (place: PlaceTensor, tag: string) => ({
        kc: c.rows.map((rows, s) => place(`${tag}K${s}`, B * rows * G * dk)),
        vc: c.rows.map((rows, s) => place(`${tag}V${s}`, B * rows * G * dv)),
      });
      const { arena, tensors: x } = createLayoutArena(gpu, 'append-group', (place) => ({
        st: place('st', 4 + appendTableWords(S)),
        rope: place('rope', table.length),
        k: c.rows.map((_, s) => place(`k${s}`, B * G * dk)),
        v: c.rows.map((_, s) => place(`v${s}`, B * G * dv)),
        grouped: place2(place, 'g'),
        single: place2(place, 's'),
      }));
      gpu.write(x.st, new Uint32Array([t, 0, 0, 0]));
      gpu.write(x.rope, table);
      for (let s = 0; s < S; s++) {
        gpu.write(x.k[s], k[s]);
        gpu.write(x.v[s], v[s]);
        for (const set of [x.grouped, x.single]) {
          gpu.write(set.kc[s], kc0[s]);
          gpu.write(set.vc[s], vc0[s]);
        }
      }
      const P = decodeParams({ B, G, dk, dv }, {});
      const sets = c.rows.map((rows, s) => ({ k: x.k[s], v: x.v[s], kCache: x.grouped.kc[s], vCache: x.grouped.vc[s], rows }));
      const grouped = await appendKVGroupDispatch(gpu, x.st, 4, P, x.rope, sets, c.name);
      const single = await Promise.all(
        c.rows.map((rows, s) =>
          decodeRowsDispatch(
            gpu,
            'appendKV',
            x.st,
            decodeParams({ B, G, dk, dv }, { rows, total: B * G * (dk + dv) }),
            { a: x.rope, b: x.k[s], c: x.v[s], d: x.single.kc[s], e_: x.single.vc[s] },
            `${c.name} set ${s}`,
          ),
        ),
      );
      gpu.run([grouped, ...single]);
      for (let s = 0; s < S; s++) {
        const rows = c.rows[s];
        const want = appendKvRow(t, table, k[s], v[s], kc0[s], vc0[s], { B, G, dk, dv, rows });
        const gk = await gpu.readF32(x.grouped.kc[s]);
        const gv = await gpu.readF32(x.grouped.vc[s]);
        expect(relRms(gk, want.kCache), `K set ${s}`).toBeLessThanOrEqual(TOL);
        expect(Array.from(gv), `V set ${s} (a copy)`).toEqual(Array.from(want.vCache, Math.fround));
        // Rows other than t mod rows are untouched, bit for bit.
        for (let b = 0; b < B; b++)
          for (let row = 0; row < rows; row++) {
            if (row === t % rows) continue;
            const at = (b * rows + row) * G * dk;
            expect(Array.from(gk.subarray(at, at + G * dk))).toEqual(Array.from(kc0[s].subarray(at, at + G * dk)));
          }
        expect(gk, `K set ${s} = single`).toEqual(await gpu.readF32(x.single.kc[s]));
        expect(gv, `V set ${s} = single`).toEqual(await gpu.readF32(x.single.vc[s]));
      }
      for (const b of arena.buffers) b.destroy();
    });
});
