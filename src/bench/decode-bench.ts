// The decode half of the NSA-vs-dense benchmark (npm run bench:nsa -- --decode, the page's
// benchmark view): the time of one decode step at position T − 1 (T tokens in the
// cache) for NSA and for dense attention on the GPU decoder (src/decode/gpu-decoder.ts),
// with the m7c-125m attention shape in a model of --layers layers and a 256-token vocabulary, so
// the step's time is mostly the layers' (the per-kernel split separates attention from the rest).
// The caches are filled by GpuDecoder.seek: random K/V rows, the compressed cache built from them
// by the emission rule, so the step attends over T keys' worth of cache without feeding T tokens.
// Per step: wall clock around step() (write, submit, readback), and where the adapter has
// timestamp queries the same step again with each dispatch in its own pass (GPU time per kernel;
// the split per kernel group and the attention kernels' sum are medians over the timed steps).
// Keys read per query are the decoder's own in-kernel counts, beside the formula
// ncmp(t) + |selected positions ≤ t| + min(w, t + 1) from the selection the GPU made, and t + 1 dense;
// DSA's main K/V rows min(k, t + 1) per group and its t + 1 indexer rows per layer (docs/dsa-spec.md
// section 7), each counted by its kernel.
import { GpuDecoder } from '../decode/gpu-decoder';
import { dsaIndexKeysRead, dsaKeysRead } from '../definitions/dsa-config';
import { mobaAsNsa } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { visibleCmpBlocks } from '../definitions/nsa-blocks';
import { selectedPositions } from '../definitions/nsa-ranges';
import { paramSpecs } from '../definitions/params';
import { type Dispatch, GpuContext } from '../gpu/context';
import { type DispatchTiming, profileDispatches } from '../gpu/profiler';
import { initParams } from '../model/init';
import { gaussian, mulberry32 } from '../util/random';
import { type BenchRow, CFG, DECODE_VOCAB, decodeModelConfig } from './bench-sizes';
import { matchedAt } from './mechanism-bench';

const PARAM_SEED = 7;
/** The token fed at position T − 1 (any id below DECODE_VOCAB). */
const TOKEN = 42;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A decode dispatch's kernel group, from its label ('decode L3 attend sel' → 'attend sel'). */
export function decodeKernelGroup(label: string): string {
  // (A split product's or attention's two dispatches, 'part' and 'combine', count as one.)
  const k = label.replace(/^decode L\d+ /, '').replace(/ (part|combine)$/, '');
  if (/^attend /.test(k)) return k;
  // NSA's selection: one dispatch on software adapters, three (dots, softmax, blocks) on GPUs.
  if (k === 'select' || /^select /.test(k)) return 'select';
  // DSA: the indexer's key append, scores and top-k read its key cache, as NSA's selection reads the compressed one.
  if (/^dsa /.test(k)) return 'select';
  if (/^(rope )?index [qkw]$/.test(k)) return 'q k v';
  if (/^compress /.test(k)) return 'compress';
  if (/^append kv/.test(k)) return 'append kv';
  if (/^(q|k\d|v\d|rope q)$/.test(k)) return 'q k v';
  if (/gate|combine/.test(k)) return 'gates';
  if (k === 'o') return 'o';
  if (/^(w1|w2|w3)$/.test(k) || /swiglu/.test(k)) return 'ffn';
  if (/rmsnorm/.test(k)) return 'rmsnorm';
  if (/embedding/.test(k)) return 'embedding';
  if (k === 'decode lm head') return 'lm head';
  return k;
}

/** The groups that read the caches: compression, selection and the attention kernels. */
export const ATTENTION_GROUPS = ['compress', 'select', 'attend cmp', 'attend sel', 'attend win', 'attend dense'];

type Split = Array<{ kernel: string; ms: number; calls: number }>;

function byGroup(t: readonly DispatchTiming[]): Split {
  const m = new Map<string, { ms: number; calls: number }>();
  for (const { label, ms } of t) {
    const k = decodeKernelGroup(label);
    const e = m.get(k) ?? { ms: 0, calls: 0 };
    e.ms += ms;
    e.calls++;
    m.set(k, e);
  }
  return [...m].map(([kernel, e]) => ({ kernel, ...e }));
}

const attentionSum = (split: Split) => split.filter((k) => ATTENTION_GROUPS.includes(k.kernel)).reduce((a, k) => a + k.ms, 0);

/** Per group, the median over runs of its time in a run; and the median over runs of the attention groups' sum. */
function medianSplit(runs: readonly DispatchTiming[][]): { split: Split; attention: number } {
  const splits = runs.map(byGroup);
  const split = splits[0]
    .map(({ kernel, calls }) => ({ kernel, ms: +median(splits.map((r) => r.find((k) => k.kernel === kernel)?.ms ?? 0)).toFixed(4), calls }))
    .sort((a, b) => b.ms - a.ms);
  return { split, attention: median(splits.map(attentionSum)) };
}

/** Without timestamps: each dispatch submitted alone, wall clock to completion (includes a submit's overhead). */
async function wallPerDispatch(gpu: GpuContext, list: readonly Dispatch[]): Promise<DispatchTiming[]> {
  const out: DispatchTiming[] = [];
  for (const d of list) {
    await gpu.finish();
    const t0 = performance.now();
    gpu.run([d]);
    await gpu.finish();
    out.push({ label: d.label, ms: performance.now() - t0 });
  }
  return out;
}

export interface KeysPerQuery {
  cmp: number;
  sel: number;
  win: number;
  total: number;
}

interface Measured {
  wall: number[];
  gpu: number[] | null;
  /** Per kernel group, the median over the timed steps. */
  split: Split;
  /** The median over the timed steps of the attention groups' sum. */
  attention: number;
  reads: Uint32Array;
  indexReads: Uint32Array;
  selection: Int32Array;
  finite: boolean;
  buildS: number;
  fillS: number;
}

async function measure(gpu: GpuContext, c: ModelConfig, T: number, repeats: number, warmup: number): Promise<Measured> {
  const t0 = performance.now();
  const dec = await GpuDecoder.create(gpu, c, { batch: 1, capacity: T });
  dec.loadParams(initParams(paramSpecs(c), PARAM_SEED));
  const t1 = performance.now();
  await dec.seek(T - 1, gaussian(mulberry32(T)));
  await gpu.finish();
  const fillS = (performance.now() - t1) / 1000;
  const wall: number[] = [];
  const ts: number[] = [];
  const runs: DispatchTiming[][] = [];
  let reads = new Uint32Array(0);
  let indexReads = new Uint32Array(0);
  let selection = new Int32Array(0);
  let finite = true;
  for (let rep = 0; rep < warmup + repeats; rep++) {
    await gpu.finish();
    const a = performance.now();
    const out = await dec.step([TOKEN]);
    const ms = performance.now() - a;
    if (!out) throw new Error('decoder step returned no output');
    await dec.seek(T - 1); // back one token: the same step again
    const per = gpu.hasTimestamps ? await profileDispatches(gpu, dec.dispatches) : [];
    if (rep < warmup) continue;
    wall.push(ms);
    if (gpu.hasTimestamps) {
      runs.push(per);
      ts.push(per.reduce((s, x) => s + x.ms, 0));
    }
    reads = out.reads.slice();
    indexReads = out.indexReads.slice();
    selection = out.selection.slice();
    finite &&= out.logits.every(Number.isFinite);
  }
  if (!gpu.hasTimestamps) runs.push(await wallPerDispatch(gpu, dec.dispatches));
  dec.destroy();
  return {
    wall,
    gpu: gpu.hasTimestamps ? ts : null,
    ...medianSplit(runs),
    reads,
    indexReads,
    selection,
    finite,
    buildS: (t1 - t0) / 1000,
    fillS,
  };
}

/** Keys read per query (mean over layers and groups) as counted, as the formula gives, and whether every (layer, group) agrees. */
function nsaKeys(m: Measured, T: number, layers: number): { read: KeysPerQuery; formula: KeysPerQuery; match: boolean } {
  const G = decodeModelConfig('nsa', T, layers).nKvGroups;
  const t = T - 1;
  const read = { cmp: 0, sel: 0, win: 0, total: 0 };
  const formula = { cmp: 0, sel: 0, win: 0, total: 0 };
  let match = true;
  for (let l = 0; l < layers; l++) {
    for (let g = 0; g < G; g++) {
      const i = l * G + g;
      const row = m.selection.subarray(i * CFG.nSel, (i + 1) * CFG.nSel);
      const f = {
        cmp: visibleCmpBlocks(t, CFG),
        sel: selectedPositions(row, t, CFG),
        win: Math.min(CFG.w, t + 1),
      };
      const r = { cmp: m.reads[i * 4], sel: m.reads[i * 4 + 1], win: m.reads[i * 4 + 2] };
      match &&= r.cmp === f.cmp && r.sel === f.sel && r.win === f.win && m.reads[i * 4 + 3] === 0;
      for (const k of ['cmp', 'sel', 'win'] as const) {
        read[k] += r[k] / (layers * G);
        formula[k] += f[k] / (layers * G);
      }
    }
  }
  read.total = read.cmp + read.sel + read.win;
  formula.total = formula.cmp + formula.sel + formula.win;
  return { read, formula, match };
}

/** Dense keys read per query (mean over layers and groups), and whether each is t + 1 with no branch counted. */
function denseKeys(m: Measured, T: number, layers: number): { read: number; match: boolean } {
  const G = decodeModelConfig('dense', T, layers).nKvGroups;
  let read = 0;
  let match = true;
  for (let i = 0; i < layers * G; i++) {
    read += m.reads[i * 4 + 3] / (layers * G);
    match &&= m.reads[i * 4 + 3] === T && m.reads[i * 4] === 0 && m.reads[i * 4 + 1] === 0 && m.reads[i * 4 + 2] === 0;
  }
  return { read, match };
}

/** The JSON line of one T (kind 'decode'): NSA and dense at position T − 1, NSA first. */
export async function decodeBenchRow(
  gpu: GpuContext,
  T: number,
  o: { layers: number; repeats: number; warmup: number },
): Promise<BenchRow & { T: number; nsa_ms: number; dense_ms: number; nsa_attention_ms: number; dense_attention_ms: number }> {
  const nsa = await measure(gpu, decodeModelConfig('nsa', T, o.layers), T, o.repeats, o.warmup);
  const dense = await measure(gpu, decodeModelConfig('dense', T, o.layers), T, o.repeats, o.warmup);
  const pick = (m: Measured) => median(m.gpu ?? m.wall);
  const [nsaMs, denseMs] = [pick(nsa), pick(dense)];
  const nk = nsaKeys(nsa, T, o.layers);
  const dk = denseKeys(dense, T, o.layers);
  const [nsaAtt, denseAtt] = [nsa.attention, dense.attention];
  return {
    kind: 'decode',
    T,
    position: T - 1,
    timing: gpu.hasTimestamps ? 'timestamp' : 'wall',
    nsa_ms: nsaMs,
    dense_ms: denseMs,
    nsa_over_dense_time: nsaMs / denseMs,
    nsa_attention_ms: nsaAtt,
    dense_attention_ms: denseAtt,
    nsa_over_dense_attention_time: nsaAtt / denseAtt,
    wall_ms: { nsa: median(nsa.wall), dense: median(dense.wall) },
    nsa_keys_per_query: nk.read,
    nsa_keys_formula: nk.formula,
    dense_keys_per_query: dk.read,
    dense_keys_formula: T,
    nsa_over_dense_keys: nk.read.total / dk.read,
    reads_match_formula: nk.match && dk.match,
    outputs_finite: nsa.finite && dense.finite,
    build_s: { nsa: nsa.buildS, dense: dense.buildS },
    fill_s: { nsa: nsa.fillS, dense: dense.fillS },
    split_timing: gpu.hasTimestamps ? 'timestamp, each dispatch in its own pass' : 'wall, each dispatch submitted alone',
    nsa_kernels: nsa.split,
    dense_kernels: dense.split,
  };
}

/** The mechanisms the GPU decoder runs besides NSA and dense. */
export const DECODE_MECHANISMS = ['window', 'moba', 'dsa'] as const;
export type DecodeMechanism = (typeof DECODE_MECHANISMS)[number];

/**
 * The JSON line (kind 'mechanism_decode') of the window, MoBA or DSA at NSA's budget (as the
 * training lines, mechanism-bench.ts's matchedAt) decoding at position T − 1 on the same model
 * shape: time, the attention kernels' time (DSA's indexer scores and top-k among them), and the key
 * rows the decoder's kernels counted (the window's in its win slot, MoBA's and DSA's selected rows
 * in their sel slot) against the formula from the GPU's selection; DSA's indexer rows apart
 * (index_keys_per_query against t + 1).
 */
export async function mechanismDecodeRow(
  gpu: GpuContext,
  m: DecodeMechanism,
  T: number,
  o: { layers: number; repeats: number; warmup: number },
  dense: { ms: number; attentionMs: number },
): Promise<BenchRow> {
  const matched = matchedAt(m, T);
  const head = { kind: 'mechanism_decode', T, position: T - 1, mechanism: m, budget: matched.budget, budget_capped: matched.capped };
  if ('issue' in matched) return { ...head, skipped: matched.issue };
  const { nsa: _nsa, ...base } = decodeModelConfig('nsa', T, o.layers);
  const c: ModelConfig =
    m === 'window'
      ? { ...base, attention: 'window', window: matched.configs.window }
      : m === 'moba'
        ? { ...base, attention: 'moba', moba: matched.configs.moba }
        : { ...base, attention: 'dsa', dsa: matched.configs.dsa };
  const r = await measure(gpu, c, T, o.repeats, o.warmup);
  const G = c.nKvGroups;
  const t = T - 1;
  let read = 0;
  let formula = 0;
  let match = true;
  for (let i = 0; i < o.layers * G; i++) {
    const counted = Array.from(r.reads.subarray(i * 4, i * 4 + 4));
    let want: number[];
    if (m === 'window') want = [0, 0, Math.min(matched.configs.window.w, t + 1), 0];
    else if (m === 'dsa') want = [0, dsaKeysRead(t, matched.configs.dsa.topK), 0, 0];
    else {
      const cfg = mobaAsNsa(matched.configs.moba);
      const row = r.selection.subarray(i * cfg.nSel, (i + 1) * cfg.nSel);
      want = [0, selectedPositions(row, t, cfg), 0, 0];
    }
    match &&= counted.every((x, k) => x === want[k]);
    read += counted.reduce((a, b) => a + b, 0) / (o.layers * G);
    formula += want.reduce((a, b) => a + b, 0) / (o.layers * G);
  }
  // DSA: the indexer rows, once per layer.
  const index =
    m === 'dsa'
      ? (() => {
          const counted = Array.from(r.indexReads.subarray(0, o.layers));
          match &&= counted.every((x) => x === dsaIndexKeysRead(t));
          return { index_keys_per_query: counted.reduce((a, b) => a + b, 0) / o.layers, index_keys_formula: dsaIndexKeysRead(t) };
        })()
      : {};
  const ms = median(r.gpu ?? r.wall);
  return {
    ...head,
    config: m === 'window' ? matched.configs.window : m === 'moba' ? matched.configs.moba : matched.configs.dsa,
    timing: gpu.hasTimestamps ? 'timestamp' : 'wall',
    ms,
    attention_ms: r.attention,
    over_dense_time: ms / dense.ms,
    over_dense_attention_time: r.attention / dense.attentionMs,
    keys_per_query: read,
    keys_formula: formula,
    over_dense_keys: read / T,
    ...index,
    reads_match_formula: match,
    outputs_finite: r.finite,
    kernels: r.split,
  };
}

/** The decode mode's config line. */
export function decodeConfigLine(o: { layers: number; repeats: number; warmup: number }, timing: string): BenchRow {
  const c = decodeModelConfig('nsa', 1, o.layers);
  return {
    kind: 'decode_config',
    B: 1,
    H: c.nHeads,
    G: c.nKvGroups,
    dk: c.dk,
    dv: c.dv,
    dim: c.dim,
    ffn: c.ffnHidden,
    layers: o.layers,
    vocab: DECODE_VOCAB,
    nsa: CFG,
    sharedKV: c.nsa?.sharedKV ?? false,
    repeats: o.repeats,
    warmup: o.warmup,
    timing,
    note:
      `m7c-125m attention shape with ${o.layers} layer(s) and a ${DECODE_VOCAB}-token vocabulary (attention isolated; *_attention_ms sums ` +
      `${ATTENTION_GROUPS.join(', ')}); one step at position T − 1 with capacity T; caches filled with random K/V rows ` +
      '(GpuDecoder.seek: the compressed cache built from them by the emission rule), random weights',
  };
}
