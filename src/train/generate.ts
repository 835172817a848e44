// Text generation on the CPU decoder: the prompt is fed token by token (decode = prefill), then
// tokens are sampled with temperature and top-k from a seeded mulberry32 stream, until the
// requested count or the context length. One loop (generateStream) serves the CLI's generate()
// and the worker's token streaming. For NSA models every generated token carries, per layer
// and group, the keys each branch read for the query that produced it, beside the paper's formula.
import { type BranchReads, type DecodeStep, ModelDecoder, type ReadsFormula, readsFormula } from '../reference/decoder';
import type { ModelConfig } from '../spec/model-config';
import { mulberry32 } from '../util/random';

export interface SamplingOptions {
  /** 0 = greedy (argmax); otherwise logits are divided by it before the softmax. */
  temperature: number;
  /** Keep only the k most likely tokens (ties to the lower id); 0 = no limit. */
  topK: number;
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

export interface GeneratedToken {
  token: number;
  /** Position of the query whose logits it was sampled from (the last token before it). */
  t: number;
  /** NSA only: one entry per (layer, group); empty for dense. */
  reads: GroupReads[];
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
}

/**
 * One token from logits[0..n): argmax when temperature = 0 or topK = 1; otherwise the softmax of
 * logits/temperature over the top-k ids, inverted at one uniform draw u ∈ [0, 1).
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
  const w = ids.map((i) => Math.exp((logits[i] - m) / o.temperature));
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

function groupReads(st: DecodeStep, c: ModelConfig): GroupReads[] {
  const nsa = c.nsa;
  if (!nsa || c.attention !== 'nsa') return [];
  const out: GroupReads[] = [];
  for (const L of st.nsa) {
    for (let g = 0; g < c.nKvGroups; g++) {
      const row = L.selection.subarray(g * nsa.nSel, (g + 1) * nsa.nSel);
      out.push({ layer: L.layer, group: g, ...L.reads[g], formula: readsFormula(st.t, row, nsa) });
    }
  }
  return out;
}

/** A generated token with the selections behind it, as generateStream yields it. */
export interface StreamStep extends GeneratedToken {
  /** Per NSA layer: selected blocks [G, nSel] of query t (a copy). Empty for dense models. */
  selection: Int32Array[];
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
 * between tokens; generate() collects them). Arguments are checked on the first next().
 */
export function* generateStream(
  config: ModelConfig,
  params: ReadonlyMap<string, ArrayLike<number>>,
  promptTokens: readonly number[],
  o: GenerateOptions,
): Generator<StreamStep, void, void> {
  checkGenerate(config, promptTokens, o);
  const V = o.vocabLimit ?? config.vocabSize;
  const P = promptTokens.length;
  const dec = new ModelDecoder(config, params);
  const rand = mulberry32(o.seed);
  let last: DecodeStep | undefined;
  for (const id of promptTokens) last = dec.step(id);
  let n = 0;
  while (n < o.maxTokens && P + n < config.seqLen) {
    const st = last as DecodeStep;
    const token = sampleToken(st.logits, o, rand, V);
    n++;
    yield { token, t: st.t, selection: st.nsa.map((L) => L.selection.slice()), reads: groupReads(st, config) };
    // The last token is never fed: nothing would read its logits.
    if (n < o.maxTokens && P + n < config.seqLen) last = dec.step(token);
  }
}

export function generate(
  config: ModelConfig,
  params: ReadonlyMap<string, ArrayLike<number>>,
  promptTokens: readonly number[],
  o: GenerateOptions,
  decode: (ids: number[]) => string,
): GenerateResult {
  const steps: GeneratedToken[] = [];
  for (const { token, t, reads } of generateStream(config, params, promptTokens, o)) steps.push({ token, t, reads });
  const tokens = steps.map((s) => s.token);
  return {
    promptTokens: [...promptTokens],
    tokens,
    text: decode(tokens),
    steps,
    stop: tokens.length === o.maxTokens ? 'tokens' : 'context',
  };
}
