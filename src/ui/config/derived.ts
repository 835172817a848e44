// Facts the config implies, shown next to it: parameters, tokens per step, NSA block counts and
// the keys a query reads (docs/nsa-spec.md property 7: ncmp(t) + |selected positions ≤ t| + min(w, t+1))
// against dense attention's t + 1 — the paper's work bound (Table 4); for the window, MoBA and DSA
// the keys src/definitions/keys-read.ts counts (docs/nsa-spec.md 15, docs/dsa-spec.md 7).
import type { ConfigIssue } from '../../definitions/config-issue';
import { dsaIndexKeysRead } from '../../definitions/dsa-config';
import { keysReadAt, meanKeysRead } from '../../definitions/keys-read';
import { mobaBlocks } from '../../definitions/mechanisms';
import { MAX_SEQ_LEN, type ModelConfig } from '../../definitions/model-config';
import { numCmpBlocks, numSelBlocks, numSelCandidates, visibleCmpBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig } from '../../definitions/nsa-config';
import { countParams } from '../../definitions/params';
import type { RunConfig } from '../../train/config';

export interface KeyReads {
  cmp: number;
  sel: number;
  win: number;
  total: number;
  /** Dense causal attention: t + 1. */
  dense: number;
}

export interface NsaFacts {
  T: number;
  /** Ncmp(T): compressed blocks of a full sequence. */
  cmpBlocks: number;
  /** Selection blocks of a full sequence: nb(T − 1). */
  selBlocks: number;
  /** Blocks the last query selects: min(n, nb(T − 1)). */
  selectedLast: number;
  /** Keys read by the last query, t = T − 1. */
  last: KeyReads;
  /** Keys read per query, averaged over t = 0 … T − 1. */
  mean: KeyReads;
  /** True when the sel count is exact (the block holding t is forced); otherwise an upper bound. */
  selExact: boolean;
  /** Where NSA starts to read fewer keys than dense with these settings. */
  crossover: KeysCrossover;
}

export interface ConfigFacts {
  /** Null while the model config has errors. */
  params: number | null;
  /** Tokens per optimizer step: batch × accumulation × T; null while any of them is invalid. */
  tokensPerStep: number | null;
  /** Total training tokens: tokensPerStep × steps. */
  trainTokens: number | null;
  nsa: NsaFacts | null;
  /** The window's, MoBA's or DSA's key counts; null for dense and NSA and while the model config has errors. */
  mechanism: MechanismFacts | null;
}

/** Keys a query of a window, MoBA or DSA model reads per K/V group, against dense attention. */
export interface MechanismFacts {
  attention: 'window' | 'moba' | 'dsa';
  T: number;
  /** Keys read by the last query, t = T − 1. */
  last: number;
  /** Keys read per query, mean over t = 0 … T − 1. */
  mean: number;
  /** Dense attention's: T at the last query, (T + 1)/2 on average. */
  denseLast: number;
  denseMean: number;
  /** The most any query reads, however long the sequence: w, k·B or k. */
  budget: number;
  /** MoBA: blocks of a T-token sequence, ⌈T / B⌉; 0 otherwise. */
  blocks: number;
  /** DSA: indexer keys (width d_I) the last query scores, T; and their mean, (T + 1)/2. 0 otherwise. */
  indexLast: number;
  indexMean: number;
}

/** The key counts of a valid window, MoBA or DSA model (null for any other attention). */
export function mechanismFacts(m: ModelConfig): MechanismFacts | null {
  const T = m.seqLen;
  const kind = m.attention;
  if (kind !== 'window' && kind !== 'moba' && kind !== 'dsa') return null;
  const last = keysReadAt(T - 1, m);
  const mean = meanKeysRead(T, m);
  if (last === null || mean === null) return null;
  const budget = kind === 'window' ? m.window!.w : kind === 'moba' ? m.moba!.topK * m.moba!.blockSize : m.dsa!.topK;
  return {
    attention: kind,
    T,
    last,
    mean,
    denseLast: T,
    denseMean: (T + 1) / 2,
    budget,
    blocks: kind === 'moba' ? mobaBlocks(T, m.moba!) : 0,
    indexLast: kind === 'dsa' ? dsaIndexKeysRead(T - 1) : 0,
    indexMean: kind === 'dsa' ? (T + 1) / 2 : 0,
  };
}

/**
 * Positions ≤ t covered by the selection of query t. The selection holds k = min(n, nb(t))
 * distinct blocks; every block before bt = ⌊t/l′⌋ is full (l′ positions), block bt holds
 * t − bt·l′ + 1. With forceLocal ≥ 1 block bt is always selected, so the count is exact;
 * otherwise this is the maximum over selections (score-dependent).
 */
export function selectedPositions(t: number, c: NsaConfig): number {
  const k = Math.min(c.nSel, numSelCandidates(t, c));
  const bt = Math.floor(t / c.lSel);
  const partial = t - bt * c.lSel + 1;
  if (c.forceLocal >= 1) return partial + (k - 1) * c.lSel;
  return k <= bt ? k * c.lSel : t + 1;
}

export function keyReads(t: number, c: NsaConfig): KeyReads {
  const cmp = visibleCmpBlocks(t, c);
  const sel = selectedPositions(t, c);
  const win = Math.min(c.w, t + 1);
  return { cmp, sel, win, total: cmp + sel + win, dense: t + 1 };
}

export function meanKeyReads(T: number, c: NsaConfig): KeyReads {
  const sum: KeyReads = { cmp: 0, sel: 0, win: 0, total: 0, dense: 0 };
  for (let t = 0; t < T; t++) {
    const r = keyReads(t, c);
    for (const k of Object.keys(sum) as Array<keyof KeyReads>) sum[k] += r[k];
  }
  for (const k of Object.keys(sum) as Array<keyof KeyReads>) sum[k] = T ? sum[k] / T : 0;
  return sum;
}

/** Where NSA starts to read fewer keys than dense attention, for a config's NSA settings. */
export interface KeysCrossover {
  /** The shortest T from which the last query (t = T − 1) reads fewer keys than dense (T), for every longer T too; null: none found. */
  last: number | null;
  /** The shortest T from which the mean over t = 0 … T − 1 is below dense's mean (T + 1)/2, for every longer T too; null: none found. */
  mean: number | null;
  /** The fixed part of NSA's reads once the sequence is long: n·l′ selected + w window keys. */
  budget: number;
}

/**
 * Sequence lengths the crossover scan covers: twice the longest a model trains (model.seqLen), so a
 * crossover past any trainable length is reported as none. The scan runs on the page's main thread
 * at every config edit; settings that never cross (stride d = 1, or a window or selection larger
 * than any sequence) scan the whole range: 2^17 queries, about 3 ms (2^22 took 100–200 ms).
 */
export const CROSSOVER_SCAN_LIMIT = 2 * MAX_SEQ_LEN;

/**
 * NSA reads ncmp(t) + |selected| + min(w, t + 1) ≈ t/d + n·l′ + w keys, dense t + 1: NSA reads
 * fewer once t(1 − 1/d) outgrows the fixed n·l′ + w. The per-query difference saws by at most
 * l′ + d around that trend, so the scan goes on until NSA is below dense by more than that (then it
 * stays below) and until the running means cross too.
 */
export function keysCrossover(c: NsaConfig, limit = CROSSOVER_SCAN_LIMIT): KeysCrossover {
  const jitter = c.lSel + c.d + c.l;
  let lastNotFewer = -1; // the last t whose query reads no fewer keys than dense
  let sumDiff = 0; // Σ_{t' ≤ t} (NSA − dense)
  let meanNotFewer = 0; // the last T (= t + 1) whose mean is no lower than dense's
  let t = 0;
  for (; t < limit; t++) {
    const diff = keyReads(t, c).total - (t + 1);
    if (diff >= 0) lastNotFewer = t;
    sumDiff += diff;
    if (sumDiff >= 0) meanNotFewer = t + 1;
    if (-diff > jitter && sumDiff < 0) break;
  }
  const found = t < limit;
  return {
    last: found ? lastNotFewer + 2 : null,
    mean: found ? meanNotFewer + 1 : null,
    budget: c.nSel * c.lSel + c.w,
  };
}

export function nsaFacts(T: number, c: NsaConfig): NsaFacts {
  const selBlocks = numSelBlocks(T, c);
  return {
    T,
    cmpBlocks: numCmpBlocks(T, c),
    selBlocks,
    selectedLast: Math.min(c.nSel, selBlocks),
    last: keyReads(Math.max(T - 1, 0), c),
    mean: meanKeyReads(T, c),
    selExact: c.forceLocal >= 1,
    crossover: keysCrossover(c),
  };
}

const okInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 1;

/** `errors` are the config's validation errors (facts that depend on a bad field are null). */
export function configFacts(c: RunConfig, errors: readonly ConfigIssue[]): ConfigFacts {
  const modelOk = !errors.some((e) => e.field.startsWith('model.'));
  const { batchSize, gradAccum, steps } = c.train;
  const T = c.model.seqLen;
  const tokensPerStep = okInt(batchSize) && okInt(gradAccum) && okInt(T) ? batchSize * gradAccum * T : null;
  return {
    params: modelOk ? countParams(c.model) : null,
    tokensPerStep,
    trainTokens: tokensPerStep !== null && okInt(steps) ? tokensPerStep * steps : null,
    nsa: modelOk && c.model.attention === 'nsa' && c.model.nsa ? nsaFacts(T, c.model.nsa) : null,
    mechanism: modelOk ? mechanismFacts(c.model) : null,
  };
}
