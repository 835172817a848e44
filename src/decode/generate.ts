// Text generation over a token decoder — the GPU decoder (src/decode/gpu-decoder.ts,
// through gpuTokenDecoder) or the float64 CPU decoder (cpuTokenDecoder, the oracle): the prompt
// is fed token by token (decode = prefill), then tokens are sampled with temperature, top-k and
// top-p from a seeded mulberry32 stream, until the requested count or the context length. One
// loop (generateStream) serves the CLI's generate() and the worker's token streaming. For NSA
// models every generated token carries, per layer and group, the keys each branch read for the
// query that produced it (counted by the decoder), beside the paper's formula; for DSA models the
// main K/V rows per group (in 'sel') and, per layer, the indexer key rows (docs/dsa-spec.md section 7).
import { dsaIndexKeysRead, dsaKeysRead } from '../definitions/dsa-config';
import { attentionNsaConfig, mobaReads, windowReads } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { type BranchReads, ModelDecoder, type ReadsFormula, readsFormula } from '../reference/decoder';
import { mulberry32 } from '../util/random';

export interface SamplingOptions {
  /** 0 = greedy (argmax); otherwise logits are divided by it before the softmax. */
  temperature: number;
  /** Keep only the k most likely tokens (ties to the lower id); 0 = no limit. */
  topK: number;
  /**
   * Nucleus sampling: keep the most likely tokens (after top-k) until their probability reaches
   * topP, in (0, 1]; 1 or absent = no limit.
   */
  topP?: number;
}

export interface GenerateOptions extends SamplingOptions {
  /** Most tokens to generate. */
  maxTokens: number;
  /** Seed of the mulberry32 sampling stream. */
  seed: number;
  /** Sample only ids < this (the tokenizer's vocabulary when smaller than the model's). */
  vocabLimit?: number;
}

/** Keys read by one (layer, group) for one query, and the formula for the same query. */
export interface GroupReads extends BranchReads {
  layer: number;
  group: number;
  formula: ReadsFormula;
}

/** DSA: the indexer key rows one layer read for one query (once per layer), and the formula t + 1. */
export interface IndexReads {
  layer: number;
  read: number;
  formula: number;
}

export interface GeneratedToken {
  token: number;
  /** Position of the query whose logits it was sampled from (the last token before it). */
  t: number;
  /** NSA, window, MoBA and DSA: one entry per (layer, group); empty for dense. */
  reads: GroupReads[];
  /** DSA only: one entry per layer; empty otherwise. */
  indexReads: IndexReads[];
}

export interface GenerateResult {
  promptTokens: number[];
  /** Generated ids only. */
  tokens: number[];
  /** decode(tokens). */
  text: string;
  steps: GeneratedToken[];
  /** 'tokens': maxTokens reached; 'context': prompt + generated filled the context. */
  stop: 'tokens' | 'context';
}

/** Index of the largest value, ties to the lower index (the NaN-free logits of a finite model). */
export function argmax(x: ArrayLike<number>, n: number = x.length): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (x[i] > x[best]) best = i;
  return best;
}

export function checkSampling(o: SamplingOptions): void {
  if (!(Number.isFinite(o.temperature) && o.temperature >= 0))
    throw new Error(`temperature must be a finite number ≥ 0 (got ${o.temperature})`);
  if (!(Number.isInteger(o.topK) && o.topK >= 0)) throw new Error(`top-k must be an integer ≥ 0 (got ${o.topK})`);
  const p = o.topP ?? 1;
  if (!(Number.isFinite(p) && p > 0 && p <= 1)) throw new Error(`top-p must be a number in (0, 1] (got ${p})`);
}

/**
 * One token from logits[0..n): argmax when temperature = 0 or topK = 1; otherwise the softmax of
 * logits/temperature over the top-k ids, cut to the smallest most-likely set reaching top-p,
 * inverted at one uniform draw u ∈ [0, 1).
 */
export function sampleToken(logits: ArrayLike<number>, o: SamplingOptions, rand: () => number, n: number = logits.length): number {
  checkSampling(o);
  if (!(Number.isInteger(n) && n >= 1 && n <= logits.length))
    throw new Error(`sampleToken: vocabulary size ${n} outside [1, ${logits.length}]`);
  for (let i = 0; i < n; i++) if (Number.isNaN(logits[i])) throw new Error(`sampleToken: logit ${i} is NaN`);
  if (o.temperature === 0 || o.topK === 1) return argmax(logits, n);
  let ids = Array.from({ length: n }, (_, i) => i);
  if (o.topK > 0 && o.topK < n) {
    ids.sort((a, b) => logits[b] - logits[a] || a - b);
    ids = ids.slice(0, o.topK).sort((a, b) => a - b);
  }
  // Shift by the max before dividing: a tiny temperature then gives exp(0) = 1 for the argmax and
  // exp(−∞) = 0 for the rest, never ∞ − ∞.
  let m = -Infinity;
  for (const i of ids) m = Math.max(m, logits[i]);
  let w = ids.map((i) => Math.exp((logits[i] - m) / o.temperature));
  const topP = o.topP ?? 1;
  if (topP < 1) [ids, w] = nucleus(ids, w, topP);
  let z = 0;
  for (const v of w) z += v;
  const u = rand() * z;
  let acc = 0;
  for (let r = 0; r < ids.length; r++) {
    acc += w[r];
    if (u < acc) return ids[r];
  }
  return ids[ids.length - 1];
}

/** The most likely ids (weights descending, ties to the lower id) until their share reaches p; in id order. */
function nucleus(ids: number[], w: number[], p: number): [number[], number[]] {
  let z = 0;
  for (const v of w) z += v;
  const order = ids.map((_, r) => r).sort((a, b) => w[b] - w[a] || ids[a] - ids[b]);
  const keep: number[] = [];
  let acc = 0;
  for (const r of order) {
    keep.push(r);
    acc += w[r];
    if (acc >= p * z) break;
  }
  keep.sort((a, b) => ids[a] - ids[b]);
  return [keep.map((r) => ids[r]), keep.map((r) => w[r])];
}

/** What a decoder returns for a fed token whose logits were asked for. */
export interface FedToken {
  /** Position of the token fed. */
  t: number;
  /** Next-token logits [vocabSize]. */
  logits: ArrayLike<number>;
  /** Per NSA layer: selected blocks [G, nSel] of query t (copies; DSA: tokens [G, k]). Empty for dense models. */
  selection: Int32Array[];
  /** Per NSA layer, per group: the key rows each branch read for query t. Empty for dense. */
  reads: BranchReads[][];
  /** DSA: per layer the indexer key rows read for query t; empty otherwise. */
  indexReads: number[];
}

/** A decoder as generation drives it, one token at a time. */
export interface TokenDecoder {
  /** For messages: which decoder runs (e.g. 'GPU decoder (WebGPU, f32)'). */
  readonly name: string;
  /** Feeds the token at the next position; want = false: its logits are not needed (prompt tokens but the last). */
  feed(token: number, want: boolean): Promise<FedToken | null>;
}

/** The float64 CPU decoder (src/reference/decoder.ts) as a TokenDecoder: the oracle. */
export function cpuTokenDecoder(config: ModelConfig, params: ReadonlyMap<string, ArrayLike<number>>): TokenDecoder {
  const dec = new ModelDecoder(config, params);
  return {
    name: 'CPU float64 decoder',
    feed(token: number, want: boolean): Promise<FedToken | null> {
      const st = dec.step(token);
      if (!want) return Promise.resolve(null);
      return Promise.resolve({
        t: st.t,
        logits: st.logits,
        selection: st.nsa.map((L) => L.selection.slice()),
        reads: st.nsa.map((L) => L.reads),
        indexReads: config.attention === 'dsa' ? st.nsa.map((L) => L.indexKeysRead ?? 0) : [],
      });
    },
  };
}

/** Keys read by query t of one group by formula: NSA's per branch, or the window's / MoBA's in its branch (docs/nsa-spec.md 10, 15). */
function readsByFormula(c: ModelConfig, t: number, row: ArrayLike<number>): ReadsFormula | null {
  const one = (cmp: number, sel: number, win: number) => ({ cmp, sel, win, total: cmp + sel + win });
  switch (c.attention) {
    case 'nsa':
      return c.nsa ? readsFormula(t, row, c.nsa) : null;
    case 'window':
      return c.window ? one(0, 0, windowReads(t, c.window)) : null;
    case 'moba':
      return c.moba ? one(0, mobaReads(t, row, c.moba), 0) : null;
    case 'dsa':
      return c.dsa ? one(0, dsaKeysRead(t, c.dsa.topK), 0) : null;
    default:
      return null;
  }
}

function groupReads(st: FedToken, c: ModelConfig): GroupReads[] {
  // A selection row's width: NSA's (or the window's / MoBA's) nSel, DSA's k.
  const width = c.attention === 'dsa' ? c.dsa?.topK : attentionNsaConfig(c)?.nSel;
  if (width === undefined) return [];
  const out: GroupReads[] = [];
  st.reads.forEach((layerReads, layer) => {
    for (let g = 0; g < c.nKvGroups; g++) {
      const row = st.selection[layer].subarray(g * width, (g + 1) * width);
      const formula = readsByFormula(c, st.t, row);
      if (formula) out.push({ layer, group: g, ...layerReads[g], formula });
    }
  });
  return out;
}

/** A generated token with the selections behind it, as generateStream yields it. */
export interface StreamStep extends GeneratedToken {
  /** Per NSA layer: selected blocks [G, nSel] of query t (a copy; DSA: tokens [G, k]). Empty for dense models. */
  selection: Int32Array[];
}

function indexReads(st: FedToken): IndexReads[] {
  return st.indexReads.map((read, layer) => ({ layer, read, formula: dsaIndexKeysRead(st.t) }));
}

/** Throws a readable message naming the bad argument of generate() / generateStream(). */
export function checkGenerate(config: ModelConfig, promptTokens: readonly number[], o: GenerateOptions): void {
  checkSampling(o);
  if (!(Number.isInteger(o.maxTokens) && o.maxTokens >= 0)) throw new Error(`tokens must be an integer ≥ 0 (got ${o.maxTokens})`);
  if (!Number.isInteger(o.seed)) throw new Error(`seed must be an integer (got ${o.seed})`);
  const V = o.vocabLimit ?? config.vocabSize;
  if (!(Number.isInteger(V) && V >= 1 && V <= config.vocabSize))
    throw new Error(`vocabLimit must be in [1, ${config.vocabSize}] (got ${V})`);
  const P = promptTokens.length;
  if (P === 0) throw new Error('the prompt is empty: give at least one token');
  if (P >= config.seqLen)
    throw new Error(
      `the prompt has ${P} tokens but the context holds ${config.seqLen}: at most ${config.seqLen - 1} leave room to generate`,
    );
  for (const [i, id] of promptTokens.entries()) {
    if (!(Number.isInteger(id) && id >= 0 && id < config.vocabSize))
      throw new Error(`prompt token ${i} is ${id}, outside the model's vocabulary [0, ${config.vocabSize})`);
  }
}

/**
 * The generation loop: yields each token as soon as it is sampled (the worker streams and cancels
 * between tokens; generate() collects them). Arguments are checked before the first token is fed;
 * `decoder` must be fresh (nothing fed yet).
 */
export async function* generateStream(
  config: ModelConfig,
  decoder: TokenDecoder,
  promptTokens: readonly number[],
  o: GenerateOptions,
): AsyncGenerator<StreamStep, void, void> {
  checkGenerate(config, promptTokens, o);
  const V = o.vocabLimit ?? config.vocabSize;
  const P = promptTokens.length;
  const rand = mulberry32(o.seed);
  let last: FedToken | null = null;
  for (const [i, id] of promptTokens.entries()) last = await decoder.feed(id, i === P - 1);
  let n = 0;
  while (n < o.maxTokens && P + n < config.seqLen) {
    const st = last as FedToken;
    const token = sampleToken(st.logits, o, rand, V);
    n++;
    yield {
      token,
      t: st.t,
      selection: st.selection.map((s) => s.slice()),
      reads: groupReads(st, config),
      indexReads: indexReads(st),
    };
    // The last token is never fed: nothing would read its logits.
    if (n < o.maxTokens && P + n < config.seqLen) last = await decoder.feed(token, true);
  }
}

export async function generate(
  config: ModelConfig,
  decoder: TokenDecoder,
  promptTokens: readonly number[],
  o: GenerateOptions,
  decode: (ids: number[]) => string,
): Promise<GenerateResult> {
  const steps: GeneratedToken[] = [];
  for await (const { token, t, reads, indexReads } of generateStream(config, decoder, promptTokens, o))
    steps.push({ token, t, reads, indexReads });
  const tokens = steps.map((s) => s.token);
  return {
    promptTokens: [...promptTokens],
    tokens,
    text: decode(tokens),
    steps,
    stop: tokens.length === o.maxTokens ? 'tokens' : 'context',
  };
}
