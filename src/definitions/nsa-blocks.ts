// Integer block arithmetic of docs/nsa-spec.md. Every kernel, the decode path and the UI use these.
import type { NsaConfig } from './nsa-config';

/** Ncmp(T): compressed blocks of a T-token sequence; block k covers [k·d, k·d + l). */
export function numCmpBlocks(T: number, c: NsaConfig): number {
  return T < c.l ? 0 : Math.floor((T - c.l) / c.d) + 1;
}

/** ncmp(t): compressed blocks visible to query t (k·d + l − 1 ≤ t). */
export function visibleCmpBlocks(t: number, c: NsaConfig): number {
  return t + 1 < c.l ? 0 : Math.floor((t + 1 - c.l) / c.d) + 1;
}

/** nb(t): selection candidates of query t (blocks j with j·lSel ≤ t). */
export function numSelCandidates(t: number, c: NsaConfig): number {
  return Math.floor(t / c.lSel) + 1;
}

/** Selection blocks of a T-token sequence: nb(T − 1), or 0 for T = 0. */
export function numSelBlocks(T: number, c: NsaConfig): number {
  return T <= 0 ? 0 : numSelCandidates(T - 1, c);
}

/** |[k·d, k·d+l) ∩ [j·lSel, (j+1)·lSel)| / l. */
export function overlapFraction(k: number, j: number, c: NsaConfig): number {
  const lo = Math.max(k * c.d, j * c.lSel);
  const hi = Math.min(k * c.d + c.l, (j + 1) * c.lSel);
  return hi > lo ? (hi - lo) / c.l : 0;
}

/** First and last selection block that compressed block k overlaps (inclusive). */
export function overlappedSelBlocks(k: number, c: NsaConfig): [number, number] {
  return [Math.floor((k * c.d) / c.lSel), Math.floor((k * c.d + c.l - 1) / c.lSel)];
}

/**
 * Forced blocks of query t in spec order: 0 (if forceInit), then bt, bt−1, …; deduped, ≥ 0.
 * O(result): at most min(forceLocal, bt + 1) local blocks, whatever forceLocal is (a huge value
 * typed into the page must not loop per forced block).
 */
export function forcedBlocks(t: number, c: NsaConfig): number[] {
  const out: number[] = c.forceInit ? [0] : [];
  const bt = Math.floor(t / c.lSel);
  const local = Math.min(c.forceLocal, bt + 1);
  for (let m = 0; m < local; m++) {
    const j = bt - m;
    if (!(c.forceInit && j === 0)) out.push(j);
  }
  return out;
}
