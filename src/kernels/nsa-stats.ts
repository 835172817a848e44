// Wrapper for shaders/nsa_stats.wgsl: cheap per-step NSA statistics (mean gate per branch,
// selection distance histogram, invalid selection rows) into one small buffer, plus its decoder.
import code from '../../shaders/nsa_stats.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { assertNsaConfig, type NsaConfig } from '../spec/nsa-config';

const WG = 256;
const HEAD = 4; // gate means (3), invalid count (1)
/** Workgroup histogram of (maxDistance + 1) u32 must fit the portable 16 KiB. */
export const NSA_STATS_MAX_DISTANCE = 4000;

export interface NsaStatsArgs {
  /** [B,T,H,3] after the sigmoid and any ablation. */
  gates: BufferSlice;
  /** int32 [B,T,G,nSel]. */
  sel: BufferSlice;
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

export interface NsaStats {
  /** Mean gate over all (b, t, head), per branch (cmp, sel, win). */
  gateMean: [number, number, number];
  /** histogram[k]: selected blocks at distance bt − j = k (the last bucket: ≥ maxDistance). */
  histogram: number[];
  /** Selection rows (b, t, g) that break a rule of docs/nsa-spec.md's top-n; must be 0. */
  invalid: number;
}

/** u32 words of the stats buffer. */
export function nsaStatsLength(maxDistance: number): number {
  return HEAD + maxDistance + 1;
}

/** Decodes a stats buffer read back from the GPU. */
export function decodeNsaStats(data: ArrayBuffer | Uint32Array, maxDistance: number): NsaStats {
  const u = data instanceof Uint32Array ? data : new Uint32Array(data);
  if (u.length < nsaStatsLength(maxDistance)) throw new Error(`decodeNsaStats: ${u.length} words, need ${nsaStatsLength(maxDistance)}`);
  const f = new Float32Array(u.buffer, u.byteOffset, 3);
  return {
    gateMean: [f[0], f[1], f[2]],
    invalid: u[3],
    histogram: Array.from(u.subarray(HEAD, HEAD + maxDistance + 1)),
  };
}

/** [reset counters + gate means, selection check + histogram]; encode both, in order. */
export async function nsaStatsDispatches(gpu: GpuContext, a: NsaStatsArgs): Promise<Dispatch[]> {
  const label = 'nsa_stats';
  const { B, T, H, G, cfg, maxDistance } = a;
  for (const [k, v] of Object.entries({ B, T, H, G, maxDistance })) {
    const lo = k === 'H' || k === 'G' ? 1 : 0;
    if (!Number.isInteger(v) || v < lo) throw new Error(`${label}: ${k} = ${v} must be an integer ≥ ${lo}`);
  }
  if (maxDistance > NSA_STATS_MAX_DISTANCE) throw new Error(`${label}: maxDistance = ${maxDistance} exceeds ${NSA_STATS_MAX_DISTANCE}`);
  assertNsaConfig(cfg, { T, H, G });
  const words = nsaStatsLength(maxDistance);
  const rows = B * T * G;
  const nGates = B * T * H;
  const want: Array<[string, BufferSlice, number]> = [
    ['gates', a.gates, nGates * 3],
    ['sel', a.sel, rows * cfg.nSel],
    ['stats', a.stats, words],
  ];
  for (const [name, s, n] of want) if (s.size < n * 4) throw new Error(`${label}: ${name} holds ${s.size} bytes, needs ${n * 4}`);
  for (const [name, s] of [['gates', a.gates], ['sel', a.sel]] as const) {
    const t = a.stats;
    if (s.buffer === t.buffer && s.offset < t.offset + t.size && t.offset < s.offset + s.size)
      throw new Error(`${label}: ${name} and stats overlap`);
  }
  const uniform = gpu.uniform([T, G, cfg.lSel, cfg.nSel, cfg.forceInit ? 1 : 0, cfg.forceLocal, maxDistance, rows, nGates, words]);
  const constants = { HIST: maxDistance + 1 };
  return Promise.all([
    gpu.dispatch({ code, entryPoint: 'resetAndGates', constants, label: `${label}.gates` }, [uniform, a.stats, a.gates], [3]),
    gpu.dispatch({ code, entryPoint: 'checkSelection', constants, label: `${label}.selection` }, [uniform, a.stats, a.sel], grid1d(ceilDiv(rows, WG))),
  ]);
}
