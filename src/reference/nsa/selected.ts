// Selected branch: query t of group g attends over the positions s ≤ t of its group's selected
// blocks (K_sel, V_sel). dK/dV loop over the reverse index, as the kernel does.
import { numSelBlocks } from '../../definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../definitions/nsa-config';
import { selectionRanges } from '../../definitions/nsa-ranges';
import { type AttentionForward, type AttentionGrads, type KeyPattern, sparseAttentionBackward, sparseAttentionForward } from './attention';
import { type ReverseIndex, selectionReverseIndex } from './selection';

/** Positions read by (t, g) under selection [T,G,nSel], ascending. */
export function selectedKeys(sel: ArrayLike<number>, t: number, g: number, G: number, c: NsaConfig): number[] {
  const row: number[] = [];
  for (let m = 0; m < c.nSel; m++) row.push(sel[(t * G + g) * c.nSel + m]);
  const out: number[] = [];
  for (const [a, b] of selectionRanges(row, t, c)) for (let s = a; s < b; s++) out.push(s);
  return out;
}

export function selectedPattern(sel: ArrayLike<number>, shape: NsaShape, c: NsaConfig): KeyPattern {
  const { G } = shape;
  const nB = numSelBlocks(shape.T, c);
  let rev: ReverseIndex | undefined; // built on first use: the forward never needs it
  return {
    keys: (t, g) => selectedKeys(sel, t, g, G, c),
    queries: (s, g) => {
      rev ??= selectionReverseIndex(sel, shape, c);
      const r = g * nB + Math.floor(s / c.lSel);
      const out: number[] = [];
      for (let m = rev.offsets[r]; m < rev.offsets[r + 1]; m++) if (rev.queries[m] >= s) out.push(rev.queries[m]);
      return out;
    },
  };
}

export function selectedForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  sel: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): AttentionForward {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionForward(q, k, v, { T, S: T, H, G, dk, dv }, selectedPattern(sel, shape, c));
}

export function selectedBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  sel: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  shape: NsaShape,
  c: NsaConfig,
): AttentionGrads {
  const { T, H, G, dk, dv } = shape;
  return sparseAttentionBackward(q, k, v, fwd, dO, { T, S: T, H, G, dk, dv }, selectedPattern(sel, shape, c));
}
