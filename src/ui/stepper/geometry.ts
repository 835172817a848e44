// Per-query arithmetic the stepper draws (docs/nsa-spec.md): candidates, the window band and the
// compressed-visibility frontier, all from src/definitions/nsa-blocks.ts so the picture follows the kernels.
import { forcedBlocks, numSelCandidates, visibleCmpBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig } from '../../definitions/nsa-config';

/** Positions the window branch reads for query t: [lo, t] inclusive. */
export function windowSpan(t: number, c: NsaConfig): { lo: number; hi: number } {
  return { lo: Math.max(0, t - c.w + 1), hi: t };
}

/** Selection blocks the window touches for query t: [first, last] inclusive. */
export function windowBlocks(t: number, c: NsaConfig): [number, number] {
  const { lo, hi } = windowSpan(t, c);
  return [Math.floor(lo / c.lSel), Math.floor(hi / c.lSel)];
}

/**
 * Last position covered by a compressed block visible to query t: (ncmp(t) − 1)·d + l − 1, or −1
 * when ncmp(t) = 0. Always ≤ t (causality) and > t − d when a block is visible.
 */
export function cmpFrontier(t: number, c: NsaConfig): number {
  const n = visibleCmpBlocks(t, c);
  return n === 0 ? -1 : (n - 1) * c.d + c.l - 1;
}

/** 'unrecorded': the snapshot has no selection for this query row (see SelectionSnapshot.recorded). */
export type CellKind = 'future' | 'candidate' | 'selected' | 'forced' | 'unrecorded';

/** What block j is for query t given its selection row (−1 padded). */
export function cellKind(t: number, j: number, row: ArrayLike<number>, c: NsaConfig): CellKind {
  if (j >= numSelCandidates(t, c)) return 'future';
  let selected = false;
  for (let m = 0; m < row.length; m++) if (row[m] === j) selected = true;
  if (!selected) return 'candidate';
  return forcedBlocks(t, c).includes(j) ? 'forced' : 'selected';
}

/** Display rows for T query rows in at most maxRows pixels: bin r covers [starts[r], starts[r+1]). */
export function rowBins(T: number, maxRows: number): number[] {
  const R = Math.max(0, Math.min(T, Math.floor(maxRows)));
  if (R === 0) return [0];
  return Array.from({ length: R + 1 }, (_, r) => Math.floor((r * T) / R));
}

/** Clamps a query position into [0, T − 1] (0 for an empty snapshot). */
export function clampT(t: number, T: number): number {
  if (T <= 0 || !Number.isFinite(t)) return 0;
  return Math.min(T - 1, Math.max(0, Math.round(t)));
}

/** Keyboard stepping of t: returns the new t, or null when the key does not step. */
export function stepKey(key: string, t: number, T: number): number | null {
  switch (key) {
    case 'ArrowLeft':
    case 'ArrowUp':
      return clampT(t - 1, T);
    case 'ArrowRight':
    case 'ArrowDown':
      return clampT(t + 1, T);
    case 'PageUp':
      return clampT(t - 16, T);
    case 'PageDown':
      return clampT(t + 16, T);
    case 'Home':
      return 0;
    case 'End':
      return clampT(T - 1, T);
    default:
      return null;
  }
}
