// NSA per-step statistics on the GPU vs a plain CPU count in this file: gate means (f32 sums vs
// float64, relative error ≤ 1e-5), histogram, invalid count and the per-branch sums of the key rows
// read (64-bit, carries included) exactly. Validity on the CPU side
// goes through src/definitions/nsa-ranges.ts selectionRanges (it throws on an invalid row) plus the count and
// forced-block rules, an implementation independent of the kernel's.
import { describe, expect, it } from 'vitest';

import { forcedBlocks, numSelBlocks, numSelCandidates } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { selectionRanges } from '../../src/definitions/nsa-ranges';
import { createArena } from '../../src/gpu/arena';
import { topNSelectionDispatch } from '../../src/kernels/nsa-select';
import { decodeNsaStats, nsaStatsDispatches, nsaStatsLength } from '../../src/kernels/nsa-stats';
import { selectBlocksRef } from '../../src/reference/nsa/selection';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

const BASE: NsaConfig = { l: 4, d: 2, lSel: 4, nSel: 4, w: 6, phi: 'avg', forceInit: true, forceLocal: 2 };

function rowValid(row: ArrayLike<number>, t: number, c: NsaConfig): boolean {
  try {
    selectionRanges(row, t, c);
  } catch {
    return false;
  }
  const picked = Array.from(row).filter((j) => j !== -1);
  const take = Math.min(c.nSel, numSelCandidates(t, c));
  return (
    picked.length === take &&
    Array.from(row)
      .slice(0, take)
      .every((j) => j >= 0) &&
    forcedBlocks(t, c).every((f) => picked.includes(f))
  );
}

function cpuStats(gates: Float32Array, sel: Int32Array, B: number, T: number, G: number, c: NsaConfig, maxD: number) {
  const gateMean = [0, 1, 2].map((k) => {
    let s = 0;
    for (let x = k; x < gates.length; x += 3) s += gates[x];
    return gates.length ? s / (gates.length / 3) : 0;
  });
  const histogram = new Array<number>(maxD + 1).fill(0);
  const invalidRows: number[] = [];
  for (let r = 0; r < B * T * G; r++) {
    const t = Math.floor(r / G) % T;
    const bt = Math.floor(t / c.lSel);
    const row = sel.subarray(r * c.nSel, (r + 1) * c.nSel);
    for (const j of row) if (j >= 0 && j <= bt) histogram[Math.min(bt - j, maxD)]++;
    if (!rowValid(row, t, c)) invalidRows.push(r);
  }
  return { gateMean, histogram, invalidRows };
}

const BRANCHES = ['cmp', 'sel', 'win'] as const;

/** Per branch, random per-row key counts below `max` (what the counting forward kernels write). */
function randomReads(rows: number, seed: number, max = 200): Uint32Array[] {
  const r = rng(seed);
  return BRANCHES.map(() => Uint32Array.from({ length: rows }, () => Math.floor(r() * max)));
}

/** The sums a plain loop gives (exact below 2⁵³). */
const sums = (reads: Uint32Array[]) => reads.map((a) => a.reduce((s, v) => s + v, 0));

async function run(
  gates: Float32Array,
  sel: Int32Array,
  B: number,
  T: number,
  H: number,
  G: number,
  cfg: NsaConfig,
  maxDistance: number,
  reads = randomReads(B * T * G, 5),
) {
  const gpu = await getGpu();
  const arena = createArena(gpu, 'stats', [
    { name: 'gates', bytes: gates.length * 4 },
    { name: 'sel', bytes: sel.length * 4 },
    ...BRANCHES.map((b) => ({ name: `reads.${b}`, bytes: Math.max(4, B * T * G * 4) })),
    { name: 'stats', bytes: nsaStatsLength(maxDistance) * 4 },
  ]);
  gpu.write(arena.get('gates'), gates);
  gpu.write(arena.get('sel'), sel);
  BRANCHES.forEach((b, c) => gpu.write(arena.get(`reads.${b}`), reads[c]));
  gpu.write(arena.get('stats'), new Uint32Array(nsaStatsLength(maxDistance)).fill(777)); // stale values: must be reset
  const ds = await nsaStatsDispatches(gpu, {
    gates: arena.get('gates'),
    sel: arena.get('sel'),
    keysRead: { cmp: arena.get('reads.cmp'), sel: arena.get('reads.sel'), win: arena.get('reads.win') },
    stats: arena.get('stats'),
    B,
    T,
    H,
    G,
    cfg,
    maxDistance,
  });
  gpu.run(ds);
  gpu.run(ds); // a second step on the same buffer: counters restart from 0
  expect(gpu.reports).toEqual([]);
  const got = decodeNsaStats(await gpu.read(arena.get('stats')), maxDistance, B * T * G);
  expect(got.keysRead).toEqual(sums(reads));
  if (B * T * G > 0) expect(got.keysPerQuery).toEqual(sums(reads).map((s) => s / (B * T * G)));
  return got;
}

/** A valid selection from random scores, and random gates in (0, 1). */
function inputs(B: number, T: number, H: number, G: number, cfg: NsaConfig, seed: number) {
  const r = rng(seed);
  const nB = numSelBlocks(T, cfg);
  const gates = Float32Array.from({ length: B * T * H * 3 }, () => r());
  const sel = new Int32Array(B * T * G * cfg.nSel);
  for (let b = 0; b < B; b++) {
    const P = Float64Array.from({ length: T * G * nB }, () => r());
    sel.set(selectBlocksRef(P, { T, H, G, dk: 1, dv: 1 }, cfg), b * T * G * cfg.nSel);
  }
  return { gates, sel };
}

function expectStats(got: ReturnType<typeof decodeNsaStats>, want: ReturnType<typeof cpuStats>) {
  got.gateMean.forEach((v, k) =>
    expect(Math.abs(v - want.gateMean[k])).toBeLessThanOrEqual(1e-5 * Math.max(1e-30, Math.abs(want.gateMean[k]))),
  );
  expect(got.histogram).toEqual(want.histogram);
  expect(got.invalid).toBe(want.invalidRows.length);
}

describe('nsa stats', () => {
  it.each([
    ['B=2, T=37, G=2, maxDistance=20 (above every distance)', BASE, 2, 37, 4, 2, 20],
    ['T=203, G=1, maxDistance=8 (last bucket collects the far blocks)', BASE, 1, 203, 3, 1, 8],
    ['nSel=1, forceInit=false, forceLocal=0, maxDistance=0', { ...BASE, nSel: 1, forceInit: false, forceLocal: 0 }, 2, 29, 2, 2, 0],
    ['T=1', BASE, 2, 1, 2, 1, 3],
  ] as Array<[string, NsaConfig, number, number, number, number, number]>)(
    '%s: valid selection → invalid = 0',
    async (_n, cfg, B, T, H, G, maxD) => {
      const { gates, sel } = inputs(B, T, H, G, cfg, T + maxD);
      const want = cpuStats(gates, sel, B, T, G, cfg, maxD);
      expect(want.invalidRows).toEqual([]);
      const got = await run(gates, sel, B, T, H, G, cfg, maxD);
      expectStats(got, want);
      expect(got.invalid).toBe(0);
      expect(got.histogram.reduce((a, v) => a + v, 0)).toBe(Array.from(sel).filter((j) => j >= 0).length);
    },
  );

  it('the GPU top-n selection passes the check (invalid = 0), read in the same pass', async () => {
    const gpu = await getGpu();
    const cfg: NsaConfig = { ...BASE, nSel: 6, forceLocal: 1 };
    const [B, T, H, G, maxD] = [2, 150, 2, 2, 40];
    const nB = numSelBlocks(T, cfg);
    const r = rng(11);
    const gates = Float32Array.from({ length: B * T * H * 3 }, () => r());
    const arena = createArena(gpu, 'stats-topn', [
      { name: 'scores', bytes: B * T * G * nB * 4 },
      { name: 'gates', bytes: gates.length * 4 },
      { name: 'sel', bytes: B * T * G * cfg.nSel * 4 },
      ...BRANCHES.map((b) => ({ name: `reads.${b}`, bytes: B * T * G * 4 })),
      { name: 'stats', bytes: nsaStatsLength(maxD) * 4 },
    ]);
    const s = (k: string) => arena.get(k);
    const keysRead = { cmp: s('reads.cmp'), sel: s('reads.sel'), win: s('reads.win') }; // zeroed: a fresh arena
    gpu.write(
      s('scores'),
      Float32Array.from({ length: B * T * G * nB }, () => r()),
    );
    gpu.write(s('gates'), gates);
    gpu.run([
      await topNSelectionDispatch(gpu, { scores: s('scores'), sel: s('sel'), B, T, G, cfg }),
      ...(await nsaStatsDispatches(gpu, {
        gates: s('gates'),
        sel: s('sel'),
        keysRead,
        stats: s('stats'),
        B,
        T,
        H,
        G,
        cfg,
        maxDistance: maxD,
      })),
    ]);
    const sel = await gpu.readI32(s('sel'));
    const got = decodeNsaStats(await gpu.read(s('stats')), maxD, B * T * G);
    expect(got.keysRead).toEqual([0, 0, 0]);
    expectStats(got, cpuStats(gates, sel.subarray(0, B * T * G * cfg.nSel), B, T, G, cfg, maxD));
    expect(got.invalid).toBe(0);
  });

  it('corrupted rows are each counted once as invalid', async () => {
    const cfg = BASE; // nSel 4, forceInit, forceLocal 2, lSel 4
    const [B, T, H, G] = [1, 40, 2, 1];
    const { gates, sel } = inputs(B, T, H, G, cfg, 3);
    const row = (t: number) => sel.subarray(t * cfg.nSel, (t + 1) * cfg.nSel);
    // t = 39: bt = 9, forced 0, 9, 8; one free slot.
    const corrupt: Array<[number, (r: Int32Array) => void, string]> = [
      [
        39,
        (r) => {
          r[3] = 10;
        },
        'j > bt',
      ],
      [
        38,
        (r) => {
          r[1] = -2;
        },
        'j < −1',
      ],
      [
        37,
        (r) => {
          r[1] = r[0];
        },
        'duplicate',
      ],
      [
        36,
        (r) => {
          [r[1], r[2]] = [r[2], r[1]];
        },
        'not ascending',
      ],
      [
        35,
        (r) => {
          r.set([1, 2, 7, 8]);
        },
        'forced block 0 missing',
      ],
      [
        34,
        (r) => {
          r.set([0, 7, 8, -1]);
        },
        'too few',
      ],
      [
        2,
        (r) => {
          r.set([0, 0, -1, -1]);
        },
        'duplicate in a short row',
      ],
      [
        5,
        (r) => {
          r.set([0, 1, -1, 1]);
        },
        'block after padding (too many)',
      ],
      [
        9,
        (r) => {
          r.set([0, -1, 2, -1]);
        },
        'padding inside the row',
      ],
    ];
    for (const [t, f] of corrupt) f(row(t));
    const want = cpuStats(gates, sel, B, T, G, cfg, 12);
    expect(want.invalidRows).toEqual(corrupt.map(([t]) => t).sort((a, b) => a - b)); // the oracle sees each one
    const got = await run(gates, sel, B, T, H, G, cfg, 12);
    expectStats(got, want);
    expect(got.invalid).toBe(corrupt.length);
  });

  it('the key sums are 64-bit: 1,100 rows of 2²⁴ − 1 keys per branch carry into the high word', async () => {
    // 256 such rows stay below 2³² in a workgroup; the 5 workgroups' sum (about 2^34) wraps the low word 4 times.
    const [B, T, H, G] = [2, 275, 2, 2];
    const { gates, sel } = inputs(B, T, H, G, BASE, 8);
    const rows = B * T * G;
    const reads = [2 ** 24 - 1, 2 ** 24 - 2, 12345].map((v) => new Uint32Array(rows).fill(v));
    const got = await run(gates, sel, B, T, H, G, BASE, 10, reads);
    expect(got.keysRead[0]).toBe(rows * (2 ** 24 - 1));
    expect(got.keysRead[0]).toBeGreaterThan(2 ** 34);
    expect(got.keysRead[2]).toBe(rows * 12345);
  });

  it('rejects a histogram too large for workgroup memory, short buffers and T ≥ 2²⁴', async () => {
    const gpu = await getGpu();
    const arena = createArena(
      gpu,
      'bad',
      ['g', 's', 'o', 'rc', 'rs', 'rw'].map((name) => ({ name, bytes: 64 })),
    );
    const a = {
      gates: arena.get('g'),
      sel: arena.get('s'),
      keysRead: { cmp: arena.get('rc'), sel: arena.get('rs'), win: arena.get('rw') },
      stats: arena.get('o'),
      B: 1,
      T: 2,
      H: 1,
      G: 1,
      cfg: BASE,
      maxDistance: 4,
    };
    await expect(nsaStatsDispatches(gpu, { ...a, maxDistance: 5000 })).rejects.toThrow(/maxDistance/);
    await expect(nsaStatsDispatches(gpu, { ...a, maxDistance: 20 })).rejects.toThrow(/stats holds/);
    await expect(nsaStatsDispatches(gpu, { ...a, stats: a.sel })).rejects.toThrow(/overlap/);
    await expect(nsaStatsDispatches(gpu, { ...a, keysRead: { ...a.keysRead, win: a.stats } })).rejects.toThrow(/overlap/);
    await expect(nsaStatsDispatches(gpu, { ...a, T: 2 ** 24 })).rejects.toThrow(/T = 16777216/);
  });
});
