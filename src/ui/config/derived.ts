// Facts the config implies, shown next to it: parameters, tokens per step, NSA block counts and
// the keys a query reads (docs/nsa-spec.md property 7: ncmp(t) + |selected positions ≤ t| + min(w, t+1))
// against dense attention's t + 1 — the paper's work bound (Table 4).
import type { ConfigIssue } from '../../definitions/config-issue';
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
}

export interface ConfigFacts {
  /** Null while the model config has errors. */
  params: number | null;
  /** Tokens per optimizer step: batch × accumulation × T; null while any of them is invalid. */
  tokensPerStep: number | null;
  /** Total training tokens: tokensPerStep × steps. */
  trainTokens: number | null;
  nsa: NsaFacts | null;
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
  };
}
