// The benchmark view's data: the JSON lines `npm run bench:attention` prints (the worker runs the
// same code and sends the same lines), reduced to what the charts plot — time per token and keys
// read per query against the context length, NSA beside dense and the other mechanisms at NSA's
// budget — and where NSA overtakes dense.

import type { BenchRow } from '../../bench/bench-sizes';

/** One JSON line of bench:nsa; the view reads the kinds below and keeps every line for the download. */
export type BenchLine = BenchRow;

/** The mechanisms timed beside NSA and dense at NSA's budget (bench:attention's mechanism lines). */
export const OTHER_SERIES = ['window', 'moba', 'dsa'] as const;
export type OtherSeries = (typeof OTHER_SERIES)[number];

/** NSA and dense at one context length, and the other mechanisms where they were measured. */
export interface BenchPoint extends Partial<Record<OtherSeries, number>> {
  T: number;
  nsa: number;
  dense: number;
}

export interface BenchSeries {
  /** Training attention fwd+bwd, ms per token (the line's ms over its T tokens). */
  train: BenchPoint[];
  /** Decode, ms per token at position T − 1 (attention kernels only where the line has them). */
  decode: BenchPoint[];
  /** Keys read per query: training (mean over all queries), decode (the query at T − 1). */
  trainKeys: BenchPoint[];
  decodeKeys: BenchPoint[];
}

const num = (l: BenchLine, k: string): number => {
  const v = l[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`bench line ${l.kind}: field ${k} is not a finite number`);
  return v;
};

/** The total of a keys-per-query object ({cmp, sel, win, total}) or a plain number. */
const keys = (l: BenchLine, k: string): number => {
  const v = l[k];
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && typeof (v as { total?: unknown }).total === 'number') return (v as { total: number }).total;
  throw new Error(`bench line ${l.kind}: field ${k} has no key count`);
};

const byT = (a: BenchPoint, b: BenchPoint) => a.T - b.T;

export function benchSeries(lines: readonly BenchLine[]): BenchSeries {
  const s: BenchSeries = { train: [], decode: [], trainKeys: [], decodeKeys: [] };
  for (const l of lines) {
    if (l.kind === 'nsa_vs_dense') {
      const T = num(l, 'T');
      s.train.push({ T, nsa: num(l, 'nsa_ms') / T, dense: num(l, 'dense_ms') / T });
      s.trainKeys.push({ T, nsa: num(l, 'nsa_keys_per_head') / T, dense: num(l, 'dense_keys_per_head') / T });
    } else if (l.kind === 'decode') {
      const T = num(l, 'T');
      const att = typeof l.nsa_attention_ms === 'number' && typeof l.dense_attention_ms === 'number' && l.dense_attention_ms > 0;
      s.decode.push({ T, nsa: num(l, att ? 'nsa_attention_ms' : 'nsa_ms'), dense: num(l, att ? 'dense_attention_ms' : 'dense_ms') });
      s.decodeKeys.push({ T, nsa: keys(l, 'nsa_keys_per_query'), dense: keys(l, 'dense_keys_per_query') });
    }
  }
  // The other mechanisms join the NSA/dense point of their T (their lines follow it); a skipped one has no time.
  for (const l of lines) {
    const m = l.mechanism as OtherSeries;
    if ((l.kind !== 'mechanism_train' && l.kind !== 'mechanism_decode') || !OTHER_SERIES.includes(m) || 'skipped' in l) continue;
    const T = num(l, 'T');
    const [times, reads] = l.kind === 'mechanism_train' ? [s.train, s.trainKeys] : [s.decode, s.decodeKeys];
    const at = (points: BenchPoint[]) => points.find((p) => p.T === T);
    const [time, read] = [at(times), at(reads)];
    if (time) time[m] = l.kind === 'mechanism_train' ? num(l, 'ms_per_token') : num(l, 'attention_ms');
    if (read) read[m] = num(l, 'keys_per_query');
  }
  for (const k of Object.keys(s) as Array<keyof BenchSeries>) s[k].sort(byT);
  return s;
}

/**
 * The crossover: the smallest measured T from which NSA stays below dense at every larger measured
 * T, or null when NSA is not below dense at the largest T.
 */
export function crossover(points: readonly BenchPoint[]): number | null {
  let at: number | null = null;
  for (let i = points.length - 1; i >= 0 && points[i].nsa < points[i].dense; i--) at = points[i].T;
  return at;
}

/** The download: the lines as bench:nsa prints them, one JSON object per line. */
export function benchJsonl(lines: readonly BenchLine[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : '');
}

/** Context lengths typed as "1024, 2048 4k 8k": sorted, distinct, each an integer in [min, max]. */
export function parseContextLengths(text: string, min: number, max: number): { Ts: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (!parts.length) return { error: 'Give at least one context length, e.g. 1024, 2048, 4096.' };
  const Ts: number[] = [];
  for (const p of parts) {
    const m = /^(\d+)(k?)$/i.exec(p);
    const T = m ? Number(m[1]) * (m[2] ? 1024 : 1) : NaN;
    if (!Number.isSafeInteger(T) || T < min || T > max) return { error: `'${p}' is not a context length from ${min} to ${max}.` };
    if (!Ts.includes(T)) Ts.push(T);
  }
  return { Ts: Ts.sort((a, b) => a - b) };
}
