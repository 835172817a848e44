// Wrapper for shaders/nsa_stats.wgsl: cheap per-step NSA statistics (mean gate per branch,
// selection distance histogram, invalid selection rows, and the key rows each branch read, summed
// from the counts its forward kernel wrote) into one small buffer, plus its decoder.
import code from '../../shaders/nsa_stats.wgsl?raw';
import { assertNsaConfig, type NsaConfig } from '../definitions/nsa-config';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, kernelUniform, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;
const HEAD = 10; // gate means (3), invalid count (1), key rows read per branch (3 × 64 bits)
/** The workgroup's per-branch key sums stay below 2³² while T < 2²⁴ (256 rows of ≤ T keys). */
const MAX_T = 1 << 24;
/** Workgroup histogram of (maxDistance + 1) u32 must fit the portable 16 KiB. */
export const NSA_STATS_MAX_DISTANCE = 4000;

export const NSA_STATS_KERNEL = defineKernel({
  name: 'nsa_stats',
  files: [['nsa_stats.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['G', 'u32'],
        ['lSel', 'u32'],
        ['nSel', 'u32'],
        ['forceInit', 'u32'],
        ['forceLocal', 'u32'],
        ['maxDistance', 'u32'],
        ['rows', 'u32', 'B·T·G selection rows'],
        ['nGates', 'u32', 'B·T·H gate triples'],
        ['words', 'u32', 'stats length in u32'],
      ],
    },
  },
  entries: {
    resetAndGates: [
      ['stats', 'array<atomic<u32>>'],
      ['gates', 'array<f32>'],
    ],
    checkSelection: [
      ['stats', 'array<atomic<u32>>'],
      ['sel', 'array<i32>'],
      ['readsCmp', 'array<u32>'],
      ['readsSel', 'array<u32>'],
      ['readsWin', 'array<u32>'],
    ],
  },
});

/** Both entry points at a small and the largest histogram. */
export const NSA_STATS_VARIANTS: readonly KernelVariant[] = [64, NSA_STATS_MAX_DISTANCE].flatMap((d) => [
  { kernel: NSA_STATS_KERNEL, entryPoint: 'resetAndGates', constants: { HIST: d + 1 } },
  { kernel: NSA_STATS_KERNEL, entryPoint: 'checkSelection', constants: { HIST: d + 1 } },
]);

export interface NsaStatsArgs {
  /** [B,T,H,3] after the sigmoid and any ablation. */
  gates: BufferSlice;
  /** int32 [B,T,G,nSel]. */
  sel: BufferSlice;
  /**
   * u32 [B,T,G] per branch: the keys each row read, as the branch's forward kernel counted them
   * (nsaBranchForwardDispatch with keysRead), in the same pass before this.
   */
  keysRead: NsaKeysReadSlices;
  /** nsaStatsLength(maxDistance) u32 words, overwritten. */
  stats: BufferSlice;
  B: number;
  T: number;
  H: number;
  G: number;
  cfg: NsaConfig;
  /** Histogram buckets 0..maxDistance; the last collects every distance ≥ maxDistance. */
  maxDistance: number;
}

/** Per branch, a u32 [B,T,G] tensor of the key rows each (b, t, g) read. */
export interface NsaKeysReadSlices {
  cmp: BufferSlice;
  sel: BufferSlice;
  win: BufferSlice;
}

export interface NsaStats {
  /** Mean gate over all (b, t, head), per branch (cmp, sel, win). */
  gateMean: [number, number, number];
  /** histogram[k]: selected blocks at distance bt − j = k (the last bucket: ≥ maxDistance). */
  histogram: number[];
  /** Selection rows (b, t, g) that break a rule of docs/nsa-spec.md's top-n; must be 0. */
  invalid: number;
  /**
   * Key rows read per branch (cmp, sel, win), summed over every row (b, t, g): the counts the
   * forward kernels wrote (a compressed block counts as one row). Divided by B·T·G: the mean per
   * query and group.
   */
  keysRead: [number, number, number];
  /** keysRead over the B·T·G rows: key rows per query and group, per branch. */
  keysPerQuery: [number, number, number];
}

/** u32 words of the stats buffer. */
export function nsaStatsLength(maxDistance: number): number {
  return HEAD + maxDistance + 1;
}

/** Decodes a stats buffer read back from the GPU; rows = B·T·G of the pass it counted. */
export function decodeNsaStats(data: ArrayBuffer | Uint32Array, maxDistance: number, rows: number): NsaStats {
  const u = data instanceof Uint32Array ? data : new Uint32Array(data);
  if (u.length < nsaStatsLength(maxDistance)) throw new Error(`decodeNsaStats: ${u.length} words, need ${nsaStatsLength(maxDistance)}`);
  const f = new Float32Array(u.buffer, u.byteOffset, 3);
  const keysRead = [0, 1, 2].map((c) => u[4 + 2 * c] + u[5 + 2 * c] * 2 ** 32) as [number, number, number];
  return {
    gateMean: [f[0], f[1], f[2]],
    invalid: u[3],
    keysRead,
    keysPerQuery: keysRead.map((k) => (rows > 0 ? k / rows : 0)) as [number, number, number],
    histogram: Array.from(u.subarray(HEAD, HEAD + maxDistance + 1)),
  };
}

// gates is never bound with the counts or the selection: it may overlap them.
const READ_PAIRS: Array<[string, string]> = ['readsCmp', 'readsSel', 'readsWin'].map((r) => ['gates', r]);

/** [reset counters + gate means, selection check + histogram]; encode both, in order. */
export async function nsaStatsDispatches(gpu: GpuContext, a: NsaStatsArgs): Promise<Dispatch[]> {
  const label = 'nsa_stats';
  const { B, T, H, G, cfg, maxDistance } = a;
  checkDims(label, { B, T, H, G, maxDistance }, { B: 0, T: 0, maxDistance: 0 });
  if (T >= MAX_T) argumentError(label, 'T', `T = ${T}: the per-workgroup key sums need T < ${MAX_T}`);
  if (maxDistance > NSA_STATS_MAX_DISTANCE)
    argumentError(label, 'maxDistance', `maxDistance = ${maxDistance} exceeds ${NSA_STATS_MAX_DISTANCE}`);
  assertNsaConfig(cfg, { T, H, G });
  const words = nsaStatsLength(maxDistance);
  const rows = B * T * G;
  const nGates = B * T * H;
  // gates and sel are never bound together: they may overlap each other, not stats.
  checkSlices(
    label,
    {
      gates: [a.gates, nGates * 3],
      sel: [a.sel, rows * cfg.nSel],
      readsCmp: [a.keysRead.cmp, rows],
      readsSel: [a.keysRead.sel, rows],
      readsWin: [a.keysRead.win, rows],
      stats: [a.stats, words],
    },
    { mayOverlap: [['gates', 'sel'], ...READ_PAIRS] },
  );
  const K = NSA_STATS_KERNEL;
  const P = kernelUniform(gpu, K, 'P', {
    T,
    G,
    lSel: cfg.lSel,
    nSel: cfg.nSel,
    forceInit: cfg.forceInit ? 1 : 0,
    forceLocal: cfg.forceLocal,
    maxDistance,
    rows,
    nGates,
    words,
  });
  const constants = { HIST: maxDistance + 1 };
  return Promise.all([
    kernelDispatch(
      gpu,
      K,
      'resetAndGates',
      { uniforms: { P }, storage: { stats: a.stats, gates: a.gates }, constants, label: `${label}.gates` },
      [3],
    ),
    kernelDispatch(
      gpu,
      K,
      'checkSelection',
      {
        uniforms: { P },
        storage: { stats: a.stats, sel: a.sel, readsCmp: a.keysRead.cmp, readsSel: a.keysRead.sel, readsWin: a.keysRead.win },
        constants,
        label: `${label}.selection`,
      },
      grid1d(ceilDiv(rows, WG)),
    ),
  ]);
}
