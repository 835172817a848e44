// Token-by-token generation for the page: the same loop, sampling stream and stop rules as
// generate() in src/model/generate.ts, but yielding each token as soon as it is sampled (with the
// selections every NSA layer made for it), so the worker can stream and cancel.
import type { ModelConfig } from '../model/config';
import { ModelDecoder, readsFormula, type DecodeStep } from '../model/decode';
import { checkSampling, sampleToken, type GenerateOptions, type GroupReads } from '../model/generate';
import { mulberry32 } from '../util/random';

export interface StreamStep {
  token: number;
  /** Position of the query whose logits it was sampled from. */
  t: number;
  /** Per NSA layer: selected blocks [G, nSel] of query t. Empty for dense models. */
  selection: Int32Array[];
  reads: GroupReads[];
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

/** Throws a readable message when generate() would refuse the same arguments. */
export function checkGenerate(config: ModelConfig, promptTokens: readonly number[], o: GenerateOptions): void {
  checkSampling(o);
  if (!(Number.isInteger(o.maxTokens) && o.maxTokens >= 0)) throw new Error(`tokens must be an integer ≥ 0 (got ${o.maxTokens})`);
  if (!Number.isInteger(o.seed)) throw new Error(`seed must be an integer (got ${o.seed})`);
  const V = o.vocabLimit ?? config.vocabSize;
  if (!(Number.isInteger(V) && V >= 1 && V <= config.vocabSize)) throw new Error(`vocabLimit must be in [1, ${config.vocabSize}] (got ${V})`);
  const P = promptTokens.length;
  if (P === 0) throw new Error('The prompt is empty: give at least one token.');
  if (P >= config.seqLen)
    throw new Error(`The prompt has ${P} tokens but the context holds ${config.seqLen}: at most ${config.seqLen - 1} leave room to generate.`);
  for (const [i, id] of promptTokens.entries())
    if (!(Number.isInteger(id) && id >= 0 && id < config.vocabSize))
      throw new Error(`Prompt token ${i} is ${id}, outside the model's vocabulary [0, ${config.vocabSize}).`);
}

/** Yields generated tokens one by one; stops at maxTokens or a full context. */
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
