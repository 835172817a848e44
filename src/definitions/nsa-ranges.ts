// Selected blocks → half-open token ranges, for the selected branch and for display. An invalid
// selection is a bug upstream (the predecessor hung on one), so it throws instead of clamping.
import type { NsaConfig } from './nsa-config';

/**
 * Merges ascending selected blocks (−1 padded at the end) into ranges [start, end) with end
 * clamped to t + 1. Throws on a non-integer, a value < −1, a block that is not a candidate of t
 * (j·lSel > t), blocks out of ascending order or repeated, or a block after padding.
 */
export function selectionRanges(blocks: ArrayLike<number>, t: number, c: NsaConfig): Array<[number, number]> {
  if (!Number.isInteger(t) || t < 0) throw new Error(`selectionRanges: invalid query position ${t}`);
  const out: Array<[number, number]> = [];
  let prev = -1;
  let padded = false;
  for (let m = 0; m < blocks.length; m++) {
    const j = blocks[m];
    if (!Number.isInteger(j) || j < -1) throw new Error(`selectionRanges: invalid block ${j} at slot ${m} (t=${t})`);
    if (j === -1) {
      padded = true;
      continue;
    }
    if (padded) throw new Error(`selectionRanges: block ${j} after padding at slot ${m} (t=${t})`);
    if (j <= prev) throw new Error(`selectionRanges: blocks not strictly ascending at slot ${m}: ${prev}, ${j} (t=${t})`);
    const start = j * c.lSel;
    const end = Math.min((j + 1) * c.lSel, t + 1);
    if (!(start >= 0 && start < end && end <= t + 1)) {
      throw new Error(`selectionRanges: block ${j} gives invalid range [${start}, ${end}) for t=${t}`);
    }
    const last = out[out.length - 1];
    if (last !== undefined && j === prev + 1) last[1] = end;
    else out.push([start, end]);
    prev = j;
  }
  return out;
}

/** Positions ≤ t a selection row reads: the total length of its selectionRanges (validated the same way). */
export function selectedPositions(blocks: ArrayLike<number>, t: number, c: NsaConfig): number {
  return selectionRanges(blocks, t, c).reduce((a, [s, e]) => a + e - s, 0);
}
