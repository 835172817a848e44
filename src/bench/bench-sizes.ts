// The NSA-vs-dense benchmark without the GPU (npm run bench:nsa and the page's benchmark view): the
// shapes it measures, the sizes of what each mode allocates (checked against the adapter's limits
// before anything is allocated), the decode model config and the closing summary line (crossovers
// and growth). The GPU work is in train-bench.ts (training attention fwd+bwd) and decode-bench.ts
// (decode per token); run-bench.ts runs them in order.
import { decodeWorkEntries } from '../decode/gpu-decoder';
import { MAX_SEQ_LEN, type ModelConfig } from '../definitions/model-config';
import type { NsaConfig } from '../definitions/nsa-config';
import { numel, paramSpecs } from '../definitions/params';
import type { AttentionShape } from '../definitions/shapes';
import { type ArenaEntry, type BufferSlice, layoutEntries, type PlaceTensor, SLICE_ALIGN } from '../gpu/arena';
import {
  type NsaBranchKV,
  type NsaCoreSaved,
  nsaCoreSavedTensors,
  type NsaCoreScratch,
  nsaCoreScratchTensors,
  nsaCoreSizes,
} from '../model/nsa/core';
import { PRESETS } from '../train/presets/presets';
import { formatBytes, GPU_MEMORY_BYTES } from '../train/resources';
import type { OtherMechanism } from './mechanism-bench';

/** One JSON line of the benchmark, as npm run bench:nsa prints it and the page downloads it. */
export type BenchRow = Record<string, unknown> & { kind: string };

/** The m7c-125m model: its per-layer attention shape is what both modes measure. */
export const M = PRESETS['m7c-125m'].model;

export const CFG: NsaConfig = {
  l: M.nsa.l,
  d: M.nsa.d,
  lSel: M.nsa.lSel,
  nSel: M.nsa.nSel,
  w: M.nsa.w,
  phi: M.nsa.phi,
  forceInit: M.nsa.forceInit,
  forceLocal: M.nsa.forceLocal,
};

/** Decode models: a small vocabulary, so the per-token time is the layers' and not the LM head's. */
export const DECODE_VOCAB = 256;
/** Decode models: one layer unless --layers says otherwise (attention time per token is per layer). */
export const DECODE_LAYERS = 1;
/** The longest context a model config allows (model.seqLen), hence the decoder's capacity. */
export const DECODE_MAX_T = MAX_SEQ_LEN;

export interface BenchNsaOptions {
  /** --T, or undefined: the default depends on the adapter (resolveBenchNsa). */
  Ts: number[] | undefined;
  /** Training attention fwd+bwd: the default, or with --decode --train. */
  train: boolean;
  /** Decode per token (--decode). */
  decode: boolean;
  repeats: number | undefined;
  warmup: number | undefined;
  /** Layers of the decode models. */
  layers: number;
  /** The mechanisms timed beside NSA and dense at NSA's budget (training: mechanism-bench.ts; decode: the GPU decoder's, decode-bench.ts); none when absent. */
  mechanisms?: OtherMechanism[];
}

export interface ResolvedBenchNsa {
  Ts: number[];
  train: boolean;
  decode: boolean;
  layers: number;
  /** Timed rounds per T: training (both lists) and decode (steps). */
  trainRepeats: number;
  trainWarmup: number;
  decodeRepeats: number;
  decodeWarmup: number;
  mechanisms: OtherMechanism[];
}

/**
 * Defaults by adapter: SwiftShader T = 1024, training 1 round and no warm-up (a T = 1024 round of
 * both takes minutes there), decode 5 steps after 1; elsewhere T = 1k … 16k, training 5 after 2,
 * decode 20 after 3. --repeats / --warmup set both modes.
 */
export function resolveBenchNsa(o: BenchNsaOptions, software: boolean): ResolvedBenchNsa {
  return {
    Ts: o.Ts ?? (software ? [1024] : [1024, 2048, 4096, 8192, 16384]),
    train: o.train,
    decode: o.decode,
    layers: o.layers,
    trainRepeats: o.repeats ?? (software ? 1 : 5),
    trainWarmup: o.warmup ?? (software ? 0 : 2),
    decodeRepeats: o.repeats ?? (software ? 5 : 20),
    decodeWarmup: o.warmup ?? (software ? 1 : 3),
    mechanisms: o.mechanisms ?? [],
  };
}

/** The training mode's per-T shape: B = 1 and the m7c-125m layer. */
export const trainShape = (T: number): AttentionShape => ({ B: 1, T, H: M.nHeads, G: M.nKvGroups, dk: M.dk, dv: M.dv });

/** The training mode's tensors at T as a typed table (one arena): inputs, both attentions' outputs and gradients. */
export interface TrainTensors {
  /** Queries [T, H, dk], read by both attentions. */
  q: BufferSlice;
  /** Per branch K/V [T, G, dk|dv] (dense attention reads the sel pair), and their NSA gradients. */
  kv: Record<Branch, NsaBranchKV>;
  dkv: Record<Branch, NsaBranchKV>;
  /** Gate values [T, H, 3] and their gradient. */
  gates: BufferSlice;
  dgates: BufferSlice;
  /** NSA output [T, H, dv]; dout is the upstream gradient both backwards read. */
  out: BufferSlice;
  dout: BufferSlice;
  dq: BufferSlice;
  /** The NSA core's saved and scratch tensors. */
  saved: NsaCoreSaved;
  scratch: NsaCoreScratch;
  /** Dense attention's own outputs and gradients. */
  dense: {
    out: BufferSlice;
    lse: BufferSlice;
    delta: BufferSlice;
    dq: BufferSlice;
    dk: BufferSlice;
    dv: BufferSlice;
    /** Each head's part of dK, dV (the head split the model plans run). */
    headParts: NsaBranchKV;
  };
}

type Branch = 'cmp' | 'sel' | 'win';

/** The one layout of the training mode's arena at T (names and sizes, and the table over them). */
export function trainLayout(T: number): (place: PlaceTensor) => TrainTensors {
  const s = trainShape(T);
  const z = nsaCoreSizes(s, CFG);
  const nq = T * s.H;
  const nk = T * s.G;
  return (place) => {
    const q = place('q', nq * s.dk);
    const kv = {} as Record<Branch, NsaBranchKV>;
    const dkv = {} as Record<Branch, NsaBranchKV>;
    for (const b of ['cmp', 'sel', 'win'] as const) {
      kv[b] = { k: place(`k.${b}`, nk * s.dk), v: place(`v.${b}`, nk * s.dv) };
      dkv[b] = { k: place(`dk.${b}`, nk * s.dk), v: place(`dv.${b}`, nk * s.dv) };
    }
    const gates = place('gates', nq * 3);
    const out = place('out', z.o);
    const dout = place('dout', z.o);
    const dq = place('dq', nq * s.dk);
    const dgates = place('dgates', nq * 3);
    const saved = nsaCoreSavedTensors(place, 's.', s, CFG);
    const scratch = nsaCoreScratchTensors(place, 'x.', s, CFG);
    const dense = {
      out: place('dense.out', z.o),
      lse: place('dense.lse', z.lse),
      delta: place('dense.delta', z.lse),
      dq: place('dense.dq', nq * s.dk),
      dk: place('dense.dk', nk * s.dk),
      dv: place('dense.dv', nk * s.dv),
      headParts: { k: place('dense.dk_heads', nq * s.dk), v: place('dense.dv_heads', nq * s.dv) },
    };
    return { q, kv, dkv, gates, dgates, out, dout, dq, saved, scratch, dense };
  };
}

/** Every tensor the training mode allocates at T (one arena), without a GPU. */
export function trainEntries(T: number): ArenaEntry[] {
  return layoutEntries(trainLayout(T));
}

/**
 * The decode mode's model at T: the m7c-125m attention shape (heads, groups, dk, dv, l, d, l′, n,
 * w, dim, FFN) with `layers` layers and a DECODE_VOCAB-token vocabulary, context T.
 */
export function decodeModelConfig(attention: 'nsa' | 'dense', T: number, layers: number): ModelConfig {
  const { nsa, ...rest } = M;
  return { ...rest, vocabSize: DECODE_VOCAB, nLayers: layers, seqLen: T, attention, ...(attention === 'nsa' ? { nsa: { ...nsa } } : {}) };
}

/** Every tensor one decoder of the decode mode allocates at T (parameters and work; B = 1, capacity T). */
export function decodeEntries(attention: 'nsa' | 'dense', T: number, layers: number): ArenaEntry[] {
  const c = decodeModelConfig(attention, T, layers);
  return [...paramSpecs(c).map((s) => ({ name: s.name, bytes: 4 * numel(s.shape) })), ...decodeWorkEntries(c, 1, T)];
}

/** The adapter limits the sizes are checked against. */
export interface BenchLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  /** Default GPU_MEMORY_BYTES (WebGPU does not report GPU memory). */
  gpuMemoryBytes?: number;
  /** For messages: 'this adapter (…)'. */
  source: string;
}

const alignUp = (x: number, a: number) => Math.ceil(x / a) * a;
const arenaBytes = (e: ArenaEntry) => alignUp(alignUp(Math.max(4, e.bytes), 4), SLICE_ALIGN);

function largestEntry(entries: readonly ArenaEntry[]): ArenaEntry {
  return entries.reduce((a, e) => (e.bytes > a.bytes ? e : a), { name: '', bytes: 0 });
}

/** What one mode at T allocates at once: the largest tensor and the total. */
function footprints(o: ResolvedBenchNsa, T: number): Array<{ mode: string; largest: ArenaEntry; total: number }> {
  const out: Array<{ mode: string; largest: ArenaEntry; total: number }> = [];
  const add = (mode: string, e: ArenaEntry[]) =>
    out.push({ mode, largest: largestEntry(e), total: e.reduce((a, x) => a + arenaBytes(x), 0) });
  if (o.train) add('training', trainEntries(T));
  // One decoder at a time (NSA, then dense); NSA's is the larger.
  if (o.decode) add('decode', decodeEntries('nsa', T, o.layers));
  return out;
}

/** A T the adapter cannot hold: why, and the largest T that fits (0: none). */
export interface BenchSizeProblem {
  T: number;
  /** "needs a 512.0 MiB tensor (training: s.scores); this adapter (…) allows 128.0 MiB per buffer and binding" */
  needs: string;
  fitsUpTo: number;
}

/**
 * The first T whose tensors do not fit the adapter (a tensor past maxBufferSize /
 * maxStorageBufferBindingSize, or all of one mode's past the GPU memory budget), or null: checked
 * before anything is allocated.
 */
export function benchSizeProblem(o: ResolvedBenchNsa, limits: BenchLimits): BenchSizeProblem | null {
  const perBuffer = Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
  const budget = limits.gpuMemoryBytes ?? GPU_MEMORY_BYTES;
  const fits = (T: number) => footprints(o, T).every((f) => f.largest.bytes <= perBuffer && f.total <= budget);
  for (const T of o.Ts) {
    if (fits(T)) continue;
    let lo = 0;
    let hi = T;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    const bad = footprints(o, T).find((f) => !(f.largest.bytes <= perBuffer && f.total <= budget))!;
    const needs =
      bad.largest.bytes > perBuffer
        ? `needs a ${formatBytes(bad.largest.bytes)} tensor (${bad.mode}: ${bad.largest.name}); ${limits.source} allows ${formatBytes(perBuffer)} per buffer and binding`
        : `needs ${formatBytes(bad.total)} of GPU memory (${bad.mode}); the budget is ${formatBytes(budget)}`;
    return { T, needs, fitsUpTo: lo };
  }
  return null;
}

/** One T of a comparison: NSA's and dense's time (ms, whatever the mode measures). */
export interface TimedPair {
  T: number;
  nsa: number;
  dense: number;
}

export interface Crossover {
  /** The smallest T measured from which NSA is faster at every larger T measured; null: none. */
  T: number | null;
  /**
   * Where log(NSA / dense) crosses 0 between the two measured T around it, linear in log T
   * (null when NSA is faster from the first T measured, or never).
   */
  interpolated: number | null;
  note: string;
}

/** The crossover T where NSA becomes (and stays) faster than dense, over the rows measured. */
export function crossover(rows: readonly TimedPair[]): Crossover {
  const r = [...rows].sort((a, b) => a.T - b.T);
  if (!r.length) return { T: null, interpolated: null, note: 'nothing measured' };
  let i = r.length;
  while (i > 0 && r[i - 1].nsa < r[i - 1].dense) i--;
  const last = r[r.length - 1].T;
  if (i === r.length)
    return {
      T: null,
      interpolated: null,
      note: `NSA is not faster at the largest T measured (${last}): the crossover is above it, if any`,
    };
  if (i === 0) return { T: r[0].T, interpolated: null, note: `NSA is faster at every T measured: the crossover is at or below ${r[0].T}` };
  const [a, b] = [r[i - 1], r[i]];
  const [ra, rb] = [Math.log(a.nsa / a.dense), Math.log(b.nsa / b.dense)];
  const x = Math.log(a.T) + ((Math.log(b.T) - Math.log(a.T)) * ra) / (ra - rb);
  return { T: b.T, interpolated: Math.round(Math.exp(x)), note: `NSA is slower at ${a.T} and faster from ${b.T} on` };
}

/** NSA decode per token at the largest T over a reference T: 4096 when measured below the largest, else the smallest. */
export const FLAT_REF_T = 4096;
/** Issue 11: NSA decode per token at the largest T within 1.3× of its time at 4k. */
export const FLAT_TARGET = 1.3;

export interface DecodeGrowth {
  from_T: number;
  to_T: number;
  nsa: number;
  dense: number;
  nsa_flat_target: number;
  nsa_flat: boolean;
}

export function decodeGrowth(rows: readonly TimedPair[]): DecodeGrowth | null {
  if (!rows.length) return null;
  const r = [...rows].sort((a, b) => a.T - b.T);
  const top = r[r.length - 1];
  const ref = r.find((x) => x.T === FLAT_REF_T && x.T < top.T) ?? r[0];
  const nsa = top.nsa / ref.nsa;
  return { from_T: ref.T, to_T: top.T, nsa, dense: top.dense / ref.dense, nsa_flat_target: FLAT_TARGET, nsa_flat: nsa <= FLAT_TARGET };
}

/**
 * The closing line (null where a mode did not run): the training crossover (NSA vs dense attention
 * fwd+bwd); decode's crossover and growth per token for the whole step (nsa_ms / dense_ms) and for
 * its attention kernels alone (nsa_attention_ms / dense_attention_ms: the step's other kernels
 * cost the same at every T, and on a shared CPU adapter their noise can outweigh attention).
 */
export function benchSummary(
  train: readonly TimedPair[],
  decode: readonly TimedPair[],
  decodeAttention: readonly TimedPair[] = [],
): BenchRow {
  return {
    kind: 'summary',
    train_crossover: train.length ? crossover(train) : null,
    decode_crossover: decode.length ? crossover(decode) : null,
    decode_growth: decodeGrowth(decode),
    decode_attention_crossover: decodeAttention.length ? crossover(decodeAttention) : null,
    decode_attention_growth: decodeGrowth(decodeAttention),
  };
}
