// npm run bench:attention's other mechanisms: beside each T's NSA-vs-dense line (train-bench.ts),
// the sliding window, MoBA and DSA (sparse phase) at NSA's budget — each set by matchBudget
// (src/definitions/budget.ts) to read at most as many key rows per query at T − 1 as the m7c-125m
// NSA config does there (capped at T − 1) — timed forward and backward on the same m7c-125m layer
// shape (B = 1, H = 12, G = 2, dk = dv = 64), with the keys each query read summed over the queries
// from the selection the GPU made (MoBA, DSA) or the window's formula. DSA also reads T narrow
// indexer keys per query (d_I wide), reported apart. A mechanism whose tensors do not fit the
// adapter at some T (DSA's index scores are T × T) gets a line that says so instead of a time.
import { matchBudget, type MatchedConfigs } from '../definitions/budget';
import { type DsaConfig, tokenSelectionAsNsa } from '../definitions/dsa-config';
import { mobaAsNsa } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { visibleCmpBlocks } from '../definitions/nsa-blocks';
import { selectedPositions } from '../definitions/nsa-ranges';
import type { AttentionShape } from '../definitions/shapes';
import { type BufferSlice, createLayoutArena, layoutEntries, type PlaceTensor } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { dsaBackwardDispatches, dsaForwardDispatches, dsaSavedTensors, dsaScratchTensors } from '../model/dsa/core';
import { mechanismBackward, mechanismForward, mobaSavedTensors, mobaScratchTensors } from '../model/mechanisms';
import { formatBytes } from '../train/resources';
import { gaussian, mulberry32 } from '../util/random';
import { type BenchRow, CFG, M, trainShape } from './bench-sizes';
import { median, timeList } from './train-bench';

/** The mechanisms this file times, in the order of their lines. */
export const OTHER_MECHANISMS = ['window', 'moba', 'dsa'] as const;
export type OtherMechanism = (typeof OTHER_MECHANISMS)[number];

/** MoBA's block (the paper's 64-token blocks, = m7c's selection block) and DSA's indexer (4 heads of 32; no warm-up in a timing). */
export const BENCH_MOBA_BLOCK = CFG.lSel;
export const BENCH_DSA: Omit<DsaConfig, 'topK'> = { indexHeads: 4, indexDim: 32, warmupSteps: 0, lossWeight: 1 };

/** NSA's (m7c-125m config) key rows per query at t = T − 1 with full selected blocks: the budget the others are matched to. */
export const nsaBudgetAt = (T: number): number => visibleCmpBlocks(T - 1, CFG) + CFG.nSel * CFG.lSel + CFG.w;

/**
 * One mechanism's config at T: NSA's budget, capped at T − 1 (at small T NSA's config reads more
 * than the whole past); or why the budget cannot be met there (e.g. below one MoBA block).
 */
export function matchedAt(
  m: OtherMechanism,
  T: number,
): { budget: number; capped: boolean } & ({ configs: MatchedConfigs } | { issue: string }) {
  const want = nsaBudgetAt(T);
  const budget = Math.min(want, T - 1);
  const r = matchBudget(budget, T, { nsa: CFG, moba: { blockSize: BENCH_MOBA_BLOCK }, dsa: BENCH_DSA }, [m]);
  const head = { budget, capped: budget < want };
  return 'configs' in r ? { ...head, configs: r.configs } : { ...head, issue: r.issues.map((i) => `${i.field}: ${i.message}`).join('; ') };
}

/** A model config carrying one mechanism (what mechanismForward reads: the attention kind and its options). */
function modelOf(m: 'window' | 'moba', T: number, c: MatchedConfigs): ModelConfig {
  const { nsa: _nsa, ...rest } = M;
  return m === 'window'
    ? { ...rest, seqLen: T, attention: 'window', window: c.window }
    : { ...rest, seqLen: T, attention: 'moba', moba: c.moba };
}

interface Common {
  q: BufferSlice;
  k: BufferSlice;
  v: BufferSlice;
  out: BufferSlice;
  lse: BufferSlice;
  dout: BufferSlice;
  delta: BufferSlice;
  dq: BufferSlice;
  dk: BufferSlice;
  dv: BufferSlice;
  headParts: { k: BufferSlice; v: BufferSlice };
}

function commonTensors(place: PlaceTensor, s: AttentionShape): Common {
  const nq = s.T * s.H;
  const nk = s.T * s.G;
  return {
    q: place('q', nq * s.dk),
    k: place('k', nk * s.dk),
    v: place('v', nk * s.dv),
    out: place('out', nq * s.dv),
    lse: place('lse', nq),
    dout: place('dout', nq * s.dv),
    delta: place('delta', nq),
    dq: place('dq', nq * s.dk),
    dk: place('dk', nk * s.dk),
    dv: place('dv', nk * s.dv),
    headParts: { k: place('dk_heads', nq * s.dk), v: place('dv_heads', nq * s.dv) },
  };
}

/** The arena of one mechanism at T: the common tensors and the mechanism's own (saved selection, scratch, indexer). */
function layoutOf(m: OtherMechanism, s: AttentionShape, c: MatchedConfigs) {
  return (place: PlaceTensor) => {
    const common = commonTensors(place, s);
    if (m === 'window') return { m, common } as const;
    if (m === 'moba')
      return {
        m,
        common,
        saved: mobaSavedTensors(place, 'moba.', s, c.moba),
        reverse: mobaScratchTensors(place, 'moba.x.', s, c.moba),
      } as const;
    const d = c.dsa;
    const idx = {
      qI: place('dsa.qI', s.T * d.indexHeads * d.indexDim),
      kI: place('dsa.kI', s.T * d.indexDim),
      wI: place('dsa.wI', s.T * d.indexHeads),
      dqI: place('dsa.dqI', s.T * d.indexHeads * d.indexDim),
      dkI: place('dsa.dkI', s.T * d.indexDim),
      dwI: place('dsa.dwI', s.T * d.indexHeads),
    };
    return { m, common, idx, saved: dsaSavedTensors(place, 'dsa.', s, d), scratch: dsaScratchTensors(place, 'dsa.x.', s, d) } as const;
  };
}

/** Why a mechanism's tensors at T do not fit this adapter (the largest tensor against the binding limit), or null. */
export function mechanismSizeProblem(m: OtherMechanism, T: number, configs: MatchedConfigs, maxBinding: number): string | null {
  const entries = layoutEntries(layoutOf(m, trainShape(T), configs));
  const big = entries.reduce((a, e) => (e.bytes > a.bytes ? e : a));
  return big.bytes > maxBinding
    ? `needs a ${formatBytes(big.bytes)} tensor (${big.name}); this adapter allows ${formatBytes(maxBinding)} per binding`
    : null;
}

async function buildLists(gpu: GpuContext, m: OtherMechanism, T: number, c: MatchedConfigs) {
  const s = trainShape(T);
  const { arena, tensors: t } = createLayoutArena(gpu, `bench.${m}`, layoutOf(m, s, c));
  const r = gaussian(mulberry32(T + 17));
  const fill = (x: BufferSlice, n: number) => gpu.write(x, Float32Array.from({ length: n }, r));
  const { common: x } = t;
  fill(x.q, T * s.H * s.dk);
  fill(x.k, T * s.G * s.dk);
  fill(x.v, T * s.G * s.dv);
  fill(x.dout, T * s.H * s.dv);
  const io = { q: x.q, k: x.k, v: x.v, out: x.out, lse: x.lse };
  const grads = { dout: x.dout, delta: x.delta, dq: x.dq, dk: x.dk, dv: x.dv, headParts: x.headParts };
  let fwd: Dispatch[];
  let bwd: Dispatch[];
  if (t.m === 'dsa') {
    const d = c.dsa;
    fill(t.idx.qI, T * d.indexHeads * d.indexDim);
    fill(t.idx.kI, T * d.indexDim);
    fill(t.idx.wI, T * d.indexHeads);
    const dio = { ...io, qI: t.idx.qI, kI: t.idx.kI, wI: t.idx.wI, saved: t.saved };
    fwd = await dsaForwardDispatches(gpu, d, s, 'sparse', dio);
    bwd = await dsaBackwardDispatches(gpu, d, s, 'sparse', dio, t.scratch, {
      gradScale: d.lossWeight / T,
      dqI: t.idx.dqI,
      dkI: t.idx.dkI,
      dwI: t.idx.dwI,
      main: grads,
    });
  } else {
    const model = modelOf(t.m, T, c);
    const mio = { ...io, ...(t.m === 'moba' ? { moba: t.saved } : {}) };
    fwd = await mechanismForward(gpu, model, s, mio);
    bwd = await mechanismBackward(gpu, model, s, mio, { ...grads, ...(t.m === 'moba' ? { reverse: t.reverse } : {}) });
  }
  return { arena, t, fwd, bwd, s };
}

/** Keys one head of a group visits over all queries (mean over groups): from the GPU's selection for MoBA and DSA. */
async function keysVisited(
  gpu: GpuContext,
  m: OtherMechanism,
  T: number,
  c: MatchedConfigs,
  built: Awaited<ReturnType<typeof buildLists>>,
) {
  const G = built.s.G;
  if (built.t.m === 'window') {
    let n = 0;
    for (let t = 0; t < T; t++) n += Math.min(c.window.w, t + 1);
    return { keys: n, indexKeys: 0 };
  }
  const cfg = built.t.m === 'moba' ? mobaAsNsa(c.moba) : tokenSelectionAsNsa(c.dsa.topK);
  const sel = await gpu.readI32(built.t.saved.sel, T * G * cfg.nSel);
  let n = 0;
  for (let t = 0; t < T; t++)
    for (let g = 0; g < G; g++) {
      const row = sel.subarray((t * G + g) * cfg.nSel, (t * G + g + 1) * cfg.nSel);
      n += selectedPositions(row, t, cfg);
    }
  return { keys: n / G, indexKeys: m === 'dsa' ? (T * (T + 1)) / 2 : 0 };
}

/** The JSON line (kind 'mechanism_train') of one mechanism at T, timed like the NSA/dense pair. */
export async function mechanismTrainRow(
  gpu: GpuContext,
  m: OtherMechanism,
  T: number,
  o: { repeats: number; warmup: number },
  dense: { ms: number; keys: number },
): Promise<BenchRow> {
  const matched = matchedAt(m, T);
  const head = { kind: 'mechanism_train', T, mechanism: m, budget: matched.budget, budget_capped: matched.capped };
  if ('issue' in matched) return { ...head, skipped: matched.issue };
  const { configs } = matched;
  const base = { ...head, config: m === 'window' ? configs.window : m === 'moba' ? configs.moba : configs.dsa };
  const tooBig = mechanismSizeProblem(m, T, configs, gpu.device.limits.maxStorageBufferBindingSize);
  if (tooBig) return { ...base, skipped: tooBig };
  const built = await buildLists(gpu, m, T, configs);
  const times: Record<'fwd' | 'bwd', number[]> = { fwd: [], bwd: [] };
  for (let rep = 0; rep < o.warmup + o.repeats; rep++) {
    for (const [name, list] of [
      ['fwd', built.fwd],
      ['bwd', built.bwd],
    ] as const) {
      const r = await timeList(gpu, list);
      if (rep >= o.warmup) times[name].push(r.gpu ?? r.wall);
    }
  }
  const out = await gpu.readF32(built.t.common.out, T * built.s.H * built.s.dv);
  const { keys, indexKeys } = await keysVisited(gpu, m, T, configs, built);
  for (const b of built.arena.buffers) b.destroy();
  const [fwd, bwd] = [median(times.fwd), median(times.bwd)];
  return {
    ...base,
    timing: gpu.hasTimestamps ? 'timestamp' : 'wall',
    fwd_ms: fwd,
    bwd_ms: bwd,
    ms: fwd + bwd,
    ms_per_token: (fwd + bwd) / T,
    over_dense_time: (fwd + bwd) / dense.ms,
    keys_per_head: keys,
    keys_per_query: keys / T,
    over_dense_keys: keys / dense.keys,
    ...(m === 'dsa' ? { index_keys_per_query: indexKeys / T, index_dim: configs.dsa.indexDim } : {}),
    outputs_finite: out.every(Number.isFinite),
  };
}
