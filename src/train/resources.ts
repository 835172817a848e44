// Resource-aware validation: what a run config needs — parameters, gradients, AdamW moments, the
// activation arena (the plan's own layout, run without a GPU), the largest single tensor, the
// checkpoint's byte array, the validation batches and the prebuilt dispatches — against what the
// adapter and the host allow. One place for the CLI (before the device exists, then against its
// limits) and the page's worker (before the plan allocates anything). Every refusal is a
// ConfigIssue naming the field to change: the field that shrinking helps most, among those the
// size grows with, and of those the one furthest past what the presets use.
import { type ConfigIssue, InvalidConfigError } from '../definitions/config-issue';
import { numel, paramSpecs } from '../definitions/params';
import { type ArenaEntry, SLICE_ALIGN } from '../gpu/arena';
import { gradNormPartialsLength } from '../kernels/gradnorm';
import { activationEntries, type PlanShape } from '../model/activations';
import { type RunConfig, shortSeqConfig, shortSeqSteps } from './config';
import { PRESETS } from './presets/presets';

export interface ResourceLimits {
  /** The adapter's maxBufferSize, bytes. */
  maxBufferSize: number;
  /** The adapter's maxStorageBufferBindingSize, bytes: every tensor is bound whole by some kernel. */
  maxStorageBufferBindingSize: number;
  /** GPU memory all arenas together may take, bytes (WebGPU does not report it: see GPU_MEMORY_BYTES). */
  gpuMemoryBytes: number;
  /** Host memory the run's arrays and prebuilt dispatches may take, bytes. */
  hostMemoryBytes: number;
  /** The largest single byte array the host makes (a checkpoint is one). */
  maxArrayBytes: number;
  /** Whose limits these are, for messages: 'this adapter (…)', 'any adapter'. */
  source: string;
  /**
   * Floats of the matmul split scratch a plan allocates on this adapter (matmulPartsFloats of
   * src/kernels/matmul.ts: 0 on software adapters, 16.5 MiB of floats on an H200).
   */
  matmulPartsFloats: number;
}

/**
 * GPU memory assumed when the adapter's is unknown (WebGPU never reports it): 80 GiB, the H100
 * this project is checked on. A run needing more is refused as impossible on such a GPU.
 */
export const GPU_MEMORY_BYTES = 80 * 2 ** 30;

/**
 * Limits before any adapter is known, as loose as any adapter can be, so only what no adapter can
 * run is refused: one binding ≤ 2^32 − 4 bytes (Vulkan's maxStorageBufferRange is a uint32; the
 * f32 tensors are 4-byte sized), GPU_MEMORY_BYTES in all, 4 GiB of host arrays (a Node 20 /
 * Chromium typed array holds at most 2^32 bytes: buffer.constants.MAX_LENGTH), and 16 GiB of host
 * memory.
 */
export const ANY_ADAPTER_LIMITS: ResourceLimits = {
  maxBufferSize: 2 ** 32 - 4,
  maxStorageBufferBindingSize: 2 ** 32 - 4,
  gpuMemoryBytes: GPU_MEMORY_BYTES,
  hostMemoryBytes: 16 * 2 ** 30,
  maxArrayBytes: 2 ** 32,
  source: 'any adapter',
  // A lower bound: software adapters split no matmul (what no adapter can hold is refused).
  matmulPartsFloats: 0,
};

/**
 * The plan prebuilds every dispatch of a training step, each with its own bind group, per
 * micro-batch (one submit per optimizer step). Measured on the tiny preset (Dawn, SwiftShader):
 * 43 dispatches per layer per micro-batch dense, 86 NSA, each about 1–2.4 KiB of host memory with
 * its bind group. The caps use the lower bounds, so they refuse only what cannot fit.
 */
export const DISPATCHES_PER_LAYER_MIN = 20;
export const HOST_BYTES_PER_DISPATCH = 1024;

/** Bytes of host memory one validation batch takes: tokens and targets, int32 each. */
const EVAL_BYTES_PER_TOKEN = 8;

/** The limits of a known adapter (its `limits` record as AdapterSummary carries it). */
export function limitsOfAdapter(
  adapterLimits: Readonly<Record<string, number>>,
  adapterName: string,
  host: { memoryBytes?: number; maxArrayBytes?: number; gpuMemoryBytes?: number; matmulPartsFloats?: number } = {},
): ResourceLimits {
  const pick = (key: 'maxBufferSize' | 'maxStorageBufferBindingSize') =>
    typeof adapterLimits[key] === 'number' && adapterLimits[key] > 0 ? adapterLimits[key] : ANY_ADAPTER_LIMITS[key];
  return {
    maxBufferSize: pick('maxBufferSize'),
    maxStorageBufferBindingSize: pick('maxStorageBufferBindingSize'),
    gpuMemoryBytes: host.gpuMemoryBytes ?? GPU_MEMORY_BYTES,
    hostMemoryBytes: host.memoryBytes ?? ANY_ADAPTER_LIMITS.hostMemoryBytes,
    maxArrayBytes: host.maxArrayBytes ?? ANY_ADAPTER_LIMITS.maxArrayBytes,
    source: `this adapter (${adapterName})`,
    matmulPartsFloats: host.matmulPartsFloats ?? 0,
  };
}

/** What a run config needs. Bytes unless said. */
export interface RunFootprint {
  params: number;
  /** One arena of the parameters; the gradients and each AdamW moment take as much again. */
  paramBytes: number;
  /** The activation arena: activations, per-micro-batch token slots, grad-norm partials. */
  activationBytes: number;
  /** Parameters, gradients, two moments and activations. */
  gpuBytes: number;
  /** The largest single tensor (it must fit one buffer and one binding). */
  largest: { name: string; bytes: number };
  /** The checkpoint's byte array: parameters and both moments (metadata aside). */
  checkpointBytes: number;
  /** Host memory of the validation batches (train.evalBatches of them at once). */
  evalHostBytes: number;
  /** Host memory of the prebuilt dispatches (a lower bound). */
  dispatchHostBytes: number;
}

const alignUp = (x: number, a: number) => Math.ceil(x / a) * a;
/** Bytes an entry takes in an arena: 4-byte sized, 256-byte aligned (src/gpu/arena.ts). */
const arenaBytes = (e: ArenaEntry) => alignUp(alignUp(Math.max(4, e.bytes), 4), SLICE_ALIGN);

/**
 * `matmulPartsFloats`: the plan's matmul split scratch on the adapter (matmulPartsFloats of
 * src/kernels/matmul.ts; 0, the default, on software adapters).
 */
export function runFootprint(c: RunConfig, matmulPartsFloats = 0): RunFootprint {
  const m = c.model;
  const t = c.train;
  const specs = paramSpecs(m);
  const paramEntries = specs.map((s) => ({ name: s.name, bytes: 4 * numel(s.shape) }));
  const params = specs.reduce((a, s) => a + numel(s.shape), 0);
  const paramBytes = paramEntries.reduce((a, e) => a + arenaBytes(e), 0);
  // The layout with one micro-batch slot; the others are the same size (added, not laid out, so a
  // huge gradAccum costs nothing to check).
  const shape: PlanShape = { B: t.batchSize, T: m.seqLen, N: t.batchSize * m.seqLen, gradAccum: 1, scoredPerSequence: m.seqLen };
  const acts = activationEntries(m, shape);
  const slotBytes = acts.filter((e) => /^(tokens|targets|tokidx)\.0$/.test(e.name)).reduce((a, e) => a + arenaBytes(e), 0);
  // The gradient norm runs over the gradient arena's buffers as whole ranges (paramRuns): counted
  // as one range of all its floats (a few KiB off where the arena spans several buffers).
  const partials = gradNormPartialsLength([{ n: paramBytes / 4 }]);
  const activationBytes =
    acts.reduce((a, e) => a + arenaBytes(e), 0) +
    (t.gradAccum - 1) * slotBytes +
    arenaBytes({ name: 'partials', bytes: 4 * partials }) +
    arenaBytes({ name: 'matmul_parts', bytes: 4 * matmulPartsFloats });
  let largest = { name: '', bytes: 0 };
  for (const e of [...paramEntries, ...acts]) if (e.bytes > largest.bytes) largest = { name: e.name, bytes: e.bytes };
  // A sequence-length warm-up holds a second plan at its length while it lasts (src/train/trainer.ts).
  const short = shortSeqSteps(t) ? runFootprint({ ...shortSeqConfig(c), train: { ...t, shortSeqSteps: 0 } }, matmulPartsFloats) : null;
  const dispatchHostBytes = t.gradAccum * m.nLayers * DISPATCHES_PER_LAYER_MIN * HOST_BYTES_PER_DISPATCH;
  return {
    params,
    paramBytes,
    activationBytes,
    gpuBytes: 4 * paramBytes + activationBytes + (short?.gpuBytes ?? 0),
    largest,
    checkpointBytes: 3 * 4 * params,
    evalHostBytes: t.evalBatches * t.batchSize * m.seqLen * EVAL_BYTES_PER_TOKEN,
    dispatchHostBytes: dispatchHostBytes + (short?.dispatchHostBytes ?? 0),
  };
}

/** A config field a size can be blamed on: its value, and how to set it on a copy. */
interface Knob {
  field: string;
  get: (c: RunConfig) => number;
  set: (c: RunConfig, v: number) => void;
}

const knob = (section: 'model' | 'train', key: string): Knob => ({
  field: `${section}.${key}`,
  get: (c) => (c[section] as unknown as Record<string, number>)[key],
  set: (c, v) => {
    (c[section] as unknown as Record<string, number>)[key] = v;
  },
});

const KNOBS: readonly Knob[] = [
  knob('train', 'batchSize'),
  knob('train', 'gradAccum'),
  knob('train', 'evalBatches'),
  knob('model', 'vocabSize'),
  knob('model', 'seqLen'),
  knob('model', 'dim'),
  knob('model', 'ffnHidden'),
  knob('model', 'nLayers'),
  knob('model', 'nHeads'),
  knob('model', 'dk'),
  knob('model', 'dv'),
];

/** The largest value of a field among the presets: what "typical" means when blaming. */
function presetMax(k: Knob): number {
  return Math.max(1, ...Object.values(PRESETS).map((p) => k.get(p as RunConfig)));
}

function withValue(c: RunConfig, k: Knob, v: number): RunConfig {
  const copy = structuredClone(c);
  k.set(copy, v);
  return copy;
}

/** A measure of a probed config; a probe the layout cannot size (e.g. heads no longer divisible) counts as no help. */
function probe(measure: (c: RunConfig) => number, c: RunConfig): number {
  try {
    return measure(c);
  } catch {
    return Infinity;
  }
}

/**
 * The field to name for an oversized `measure`: among the fields whose halving shrinks it by a
 * quarter or more, the one furthest past the presets' largest value.
 */
function blame(c: RunConfig, measure: (c: RunConfig) => number): Knob {
  const now = measure(c);
  let best: Knob | null = null;
  let bestRatio = -Infinity;
  for (const k of KNOBS) {
    const v = k.get(c);
    if (v <= 1) continue;
    if (probe(measure, withValue(c, k, Math.floor(v / 2))) > 0.75 * now) continue;
    const ratio = v / presetMax(k);
    if (ratio > bestRatio) [best, bestRatio] = [k, ratio];
  }
  return best ?? KNOBS[0];
}

/** The largest value of `k` (≤ its current one) keeping `measure` ≤ limit, or 0 when even 1 is too much. */
function largestFitting(c: RunConfig, k: Knob, measure: (c: RunConfig) => number, limit: number): number {
  let lo = 0;
  let hi = k.get(c);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (probe(measure, withValue(c, k, mid)) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function formatBytes(b: number): string {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(1)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(1)} MiB`;
  return `${(b / 2 ** 10).toFixed(1)} KiB`;
}

/** One resource rule: what is measured, its limit, and how the refusal reads. */
interface Rule {
  measure: (f: RunFootprint, c: RunConfig) => number;
  limit: (l: ResourceLimits) => number;
  /** The refusal after "field: value needs". */
  what: (f: RunFootprint, l: ResourceLimits) => string;
}

const RULES: readonly Rule[] = [
  {
    measure: (f) => f.largest.bytes,
    limit: (l) => Math.min(l.maxBufferSize, l.maxStorageBufferBindingSize),
    what: (f, l) =>
      `a ${formatBytes(f.largest.bytes)} tensor (${f.largest.name}); ${l.source} allows ` +
      `${formatBytes(Math.min(l.maxBufferSize, l.maxStorageBufferBindingSize))} per buffer and binding`,
  },
  {
    measure: (f) => f.gpuBytes,
    limit: (l) => l.gpuMemoryBytes,
    what: (f, l) =>
      `${formatBytes(f.gpuBytes)} of GPU memory (${formatBytes(f.activationBytes)} of activations, ` +
      `${formatBytes(4 * f.paramBytes)} for ${(f.params / 1e6).toFixed(1)} M parameters, their gradients and two AdamW moments); ` +
      `the budget is ${formatBytes(l.gpuMemoryBytes)}`,
  },
  {
    measure: (f) => f.checkpointBytes,
    limit: (l) => l.maxArrayBytes,
    what: (f, l) =>
      `a ${formatBytes(f.checkpointBytes)} checkpoint (${(f.params / 1e6).toFixed(1)} M parameters and two AdamW moments in one byte array); ` +
      `the host's largest array is ${formatBytes(l.maxArrayBytes)}`,
  },
  {
    // The validation batches are drawn all at once (Dataset.validationBatches).
    measure: (f) => f.evalHostBytes,
    limit: (l) => l.hostMemoryBytes / 4,
    what: (f, l) =>
      `${formatBytes(f.evalHostBytes)} of validation batches in host memory; at most ${formatBytes(l.hostMemoryBytes / 4)} (a quarter of the host's)`,
  },
  {
    // Every micro-batch's forward and backward is prebuilt (one submit per optimizer step).
    measure: (f) => f.dispatchHostBytes,
    limit: (l) => l.hostMemoryBytes / 4,
    what: (f, l) =>
      `at least ${formatBytes(f.dispatchHostBytes)} of prebuilt dispatches (${DISPATCHES_PER_LAYER_MIN} or more per layer per micro-batch); ` +
      `at most ${formatBytes(l.hostMemoryBytes / 4)} (a quarter of the host's)`,
  },
];

/**
 * Every resource the config needs beyond `limits`, each naming the field to change (with the
 * largest value of it that fits). Expects a config that validateRunConfig accepts.
 */
export function checkRunResources(c: RunConfig, limits: ResourceLimits = ANY_ADAPTER_LIMITS): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const f = runFootprint(c, limits.matmulPartsFloats);
  for (const rule of RULES) {
    const limit = rule.limit(limits);
    const measure = (x: RunConfig) => rule.measure(runFootprint(x, limits.matmulPartsFloats), x);
    if (rule.measure(f, c) <= limit) continue;
    const k = blame(c, measure);
    const fits = largestFitting(c, k, measure, limit);
    const hint = fits >= 1 ? ` (${k.field.split('.')[1]} ≤ ${fits} fits)` : '';
    issues.push({ field: k.field, message: `${k.get(c)} needs ${rule.what(f, limits)}${hint}` });
  }
  return issues;
}

/** Throws an InvalidConfigError naming each field whose resources exceed `limits`. */
export function assertRunResources(c: RunConfig, limits: ResourceLimits = ANY_ADAPTER_LIMITS, context = 'run too large'): void {
  const issues = checkRunResources(c, limits);
  if (issues.length) throw new InvalidConfigError(context, issues);
}

/**
 * train.evalBatches against what the data can supply: validation windows start at distinct
 * positions of the held-out split (src/train/data/text.ts), so more than it has only repeats
 * windows, costing time and memory for no information. Generated data (Infinity tokens) is unbounded.
 */
export function checkEvalSupply(c: RunConfig, data: { name: string; valTokens: number }): ConfigIssue[] {
  const t = c.train;
  if (!Number.isFinite(data.valTokens) || data.valTokens === 0 || t.evalBatches === 0) return [];
  const windows = Math.max(0, data.valTokens - c.model.seqLen);
  const cap = Math.floor(windows / t.batchSize);
  if (t.evalBatches <= cap) return [];
  return [
    {
      field: 'train.evalBatches',
      message: `${t.evalBatches} batches of ${t.batchSize} need ${t.evalBatches * t.batchSize} validation windows; ${data.name}'s validation split has ${windows} (evalBatches ≤ ${cap} fits)`,
    },
  ];
}
