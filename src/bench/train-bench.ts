// The training half of the NSA-vs-dense benchmark (npm run bench:nsa, the page's benchmark view):
// NSA attention (the GPU core: compression, cmp/sel/win branches, selection, gated mix) against
// dense causal flash attention, forward and backward, with the m7c-125m per-layer shape (B = 1,
// H = 12, G = 2, dk = dv = 64; l = 32, d = 16, l' = 64, n = 16, w = 512). Per T the median ms of
// each (GPU time from timestamp queries when the adapter has them, each dispatch in its own pass;
// else wall clock around one submit and onSubmittedWorkDone; the wall clock of the same runs is
// given too), the time ratio and the ratio of keys visited (dense T(T+1)/2 per head; NSA
// Σ_t ncmp(t) + |selected positions ≤ t| + min(w, t+1), from the selection the GPU made).
import { visibleCmpBlocks } from '../definitions/nsa-blocks';
import type { NsaConfig } from '../definitions/nsa-config';
import { selectedPositions } from '../definitions/nsa-ranges';
import type { AttentionShape } from '../definitions/shapes';
import { type Arena, createLayoutArena } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { type DispatchTiming, profileDispatches, timingsByKernel } from '../gpu/profiler';
import { attentionBackwardDispatches, attentionForwardDispatch } from '../kernels/attention';
import { nsaCoreBackward, nsaCoreForward, nsaCoreSizes } from '../model/nsa/core';
import { gaussian, mulberry32 } from '../util/random';
import { type BenchRow, CFG, M, type TimedPair, trainLayout, trainShape, type TrainTensors } from './bench-sizes';

/** Keys one head visits over all queries, dense causal: Σ_t (t + 1). */
const denseKeysVisited = (T: number): number => (T * (T + 1)) / 2;

/**
 * Keys one head of group g visits over all queries under NSA: ncmp(t) compressed keys, the selected
 * positions ≤ t (from the selection `sel` [T, G, nSel], validated) and min(w, t + 1) window keys.
 * Returned as the mean over groups (every head of a group shares its group's selection).
 */
function nsaKeysVisited(sel: Int32Array, T: number, G: number, cfg: NsaConfig): number {
  let total = 0;
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) {
      const row = sel.subarray((t * G + g) * cfg.nSel, (t * G + g + 1) * cfg.nSel);
      const selected = selectedPositions(row, t, cfg);
      total += visibleCmpBlocks(t, cfg) + selected + Math.min(cfg.w, t + 1);
    }
  }
  return total / G;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Lists {
  nsaFwd: Dispatch[];
  nsaBwd: Dispatch[];
  denseFwd: Dispatch[];
  denseBwd: Dispatch[];
}

async function buildLists(gpu: GpuContext, T: number): Promise<{ arena: Arena; t: TrainTensors; lists: Lists; s: AttentionShape }> {
  const s = trainShape(T);
  const z = nsaCoreSizes(s, CFG);
  const nq = T * s.H;
  const nk = T * s.G;
  const { arena, tensors: t } = createLayoutArena(gpu, 'bench.nsa', trainLayout(T));
  const r = gaussian(mulberry32(T));
  const randn = (n: number) => Float32Array.from({ length: n }, r);
  gpu.write(t.q, randn(nq * s.dk));
  gpu.write(t.dout, randn(z.o));
  for (const b of ['cmp', 'sel', 'win'] as const) {
    gpu.write(t.kv[b].k, randn(nk * s.dk));
    gpu.write(t.kv[b].v, randn(nk * s.dv));
  }
  const rg = mulberry32(T + 1);
  gpu.write(
    t.gates,
    Float32Array.from({ length: nq * 3 }, () => 0.25 + 0.5 * rg()),
  );
  const io = { q: t.q, cmp: t.kv.cmp, sel: t.kv.sel, win: t.kv.win, gates: t.gates, out: t.out, saved: t.saved };
  const dense = {
    B: 1,
    T,
    H: s.H,
    G: s.G,
    dk: s.dk,
    dv: s.dv,
    q: t.q,
    k: t.kv.sel.k,
    v: t.kv.sel.v,
    out: t.dense.out,
    lse: t.dense.lse,
  };
  const [nsaFwd, nsaBwd, denseFwd, denseBwd] = await Promise.all([
    nsaCoreForward(gpu, s, CFG, io, t.scratch),
    nsaCoreBackward(gpu, s, CFG, io, t.scratch, {
      dout: t.dout,
      dq: t.dq,
      cmp: t.dkv.cmp,
      sel: t.dkv.sel,
      win: t.dkv.win,
      gates: { kind: 'gates', dgates: t.dgates },
    }),
    attentionForwardDispatch(gpu, dense).then((d) => [d]),
    attentionBackwardDispatches(gpu, {
      ...dense,
      dout: t.dout,
      delta: t.dense.delta,
      gradQ: t.dense.dq,
      gradK: t.dense.dk,
      gradV: t.dense.dv,
      headParts: t.dense.headParts,
    }),
  ]);
  return { arena, t, lists: { nsaFwd, nsaBwd, denseFwd, denseBwd }, s };
}

/**
 * One timed run of a list: GPU ms from timestamp queries (each dispatch in its own pass) when the
 * adapter has them, and the wall-clock ms of that same run (submit to completion).
 */
export async function timeList(
  gpu: GpuContext,
  list: readonly Dispatch[],
): Promise<{ wall: number; gpu: number | null; perDispatch: DispatchTiming[] }> {
  await gpu.finish();
  const t0 = performance.now();
  if (gpu.hasTimestamps) {
    const perDispatch = await profileDispatches(gpu, list);
    return { wall: performance.now() - t0, gpu: perDispatch.reduce((a, t) => a + t.ms, 0), perDispatch };
  }
  gpu.run(list);
  await gpu.finish();
  return { wall: performance.now() - t0, gpu: null, perDispatch: [] };
}

/** The training mode's config line. */
export function trainConfigLine(o: { repeats: number; warmup: number }, timing: string): BenchRow {
  return { kind: 'config', B: 1, H: M.nHeads, G: M.nKvGroups, dk: M.dk, dv: M.dv, nsa: CFG, repeats: o.repeats, warmup: o.warmup, timing };
}

/** The JSON line of one T (kind 'nsa_vs_dense'): NSA vs dense attention fwd+bwd, and its timed pair. */
export async function trainBenchRow(
  gpu: GpuContext,
  T: number,
  o: { repeats: number; warmup: number },
): Promise<{ line: BenchRow; pair: TimedPair }> {
  const { repeats, warmup } = o;
  const timing = gpu.hasTimestamps ? 'timestamp' : 'wall';
  {
    const tBuild = performance.now();
    const { arena, t, lists, s } = await buildLists(gpu, T);
    const buildS = (performance.now() - tBuild) / 1000;
    const parts: Array<[keyof Lists, Dispatch[]]> = Object.entries(lists) as Array<[keyof Lists, Dispatch[]]>;
    const wall: Record<string, number[]> = {};
    const ts: Record<string, number[]> = {};
    let lastNsa: DispatchTiming[] = [];
    // The forwards run first in every round, so each backward reads its own forward's outputs.
    for (let rep = 0; rep < warmup + repeats; rep++) {
      for (const [name, list] of parts) {
        const r = await timeList(gpu, list);
        if (rep < warmup) continue;
        (wall[name] ??= []).push(r.wall);
        (ts[name] ??= []).push(r.gpu ?? r.wall);
        if (name === 'nsaFwd') lastNsa = r.perDispatch;
        if (name === 'nsaBwd') lastNsa = [...lastNsa, ...r.perDispatch];
      }
    }
    const med = (src: Record<string, number[]>, k: keyof Lists) => median(src[k]);
    const pick = gpu.hasTimestamps ? ts : wall;
    const dense = { fwd: med(pick, 'denseFwd'), bwd: med(pick, 'denseBwd') };
    const nsa = { fwd: med(pick, 'nsaFwd'), bwd: med(pick, 'nsaBwd') };
    const sel = await gpu.readI32(t.saved.sel, T * s.G * CFG.nSel);
    const [outNsa, outDense] = [await gpu.readF32(t.out, T * s.H * s.dv), await gpu.readF32(t.dense.out, T * s.H * s.dv)];
    const finite = outNsa.every(Number.isFinite) && outDense.every(Number.isFinite);
    const denseKeys = denseKeysVisited(T);
    const nsaKeys = nsaKeysVisited(sel, T, s.G, CFG);
    // Per-kernel split of the last timed NSA forward + backward.
    const kernels = gpu.hasTimestamps
      ? timingsByKernel(lastNsa).map((k) => ({ kernel: k.kernel, ms: +k.ms.toFixed(3), calls: k.calls }))
      : undefined;
    const line: BenchRow = {
      kind: 'nsa_vs_dense',
      T,
      timing,
      dense_fwd_ms: dense.fwd,
      dense_bwd_ms: dense.bwd,
      dense_ms: dense.fwd + dense.bwd,
      nsa_fwd_ms: nsa.fwd,
      nsa_bwd_ms: nsa.bwd,
      nsa_ms: nsa.fwd + nsa.bwd,
      nsa_over_dense_time: (nsa.fwd + nsa.bwd) / (dense.fwd + dense.bwd),
      nsa_over_dense_fwd: nsa.fwd / dense.fwd,
      nsa_over_dense_bwd: nsa.bwd / dense.bwd,
      dense_keys_per_head: denseKeys,
      nsa_keys_per_head: nsaKeys,
      nsa_over_dense_keys: nsaKeys / denseKeys,
      wall_ms: Object.fromEntries(parts.map(([k]) => [k, med(wall, k)])),
      outputs_finite: finite,
      build_s: buildS,
      nsa_kernels: kernels,
    };
    for (const b of arena.buffers) b.destroy();
    return { line, pair: { T, nsa: nsa.fwd + nsa.bwd, dense: dense.fwd + dense.bwd } };
  }
}
