// Selection scores (spec eq. 9 by overlap, eq. 10 group sums), top-n selection, and the reverse
// index (for each (g, j) the queries that selected j) that the atomic-free backward loops over.
import {
  forcedBlocks,
  numCmpBlocks,
  numSelBlocks,
  numSelCandidates,
  overlapFraction,
  overlappedSelBlocks,
  visibleCmpBlocks,
} from '../../definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../definitions/nsa-config';

/** Adds p_slc[t,i,·] = Σ_{k<ncmp(t)} p[k]·overlap(k,·) into out[outOff..]; p[pOff + k] is p_cmp. */
export function selectionScoresRow(p: ArrayLike<number>, pOff: number, t: number, c: NsaConfig, out: Float64Array, outOff: number): void {
  const n = visibleCmpBlocks(t, c);
  for (let k = 0; k < n; k++) {
    const [j0, j1] = overlappedSelBlocks(k, c);
    for (let j = j0; j <= j1; j++) out[outOff + j] += p[pOff + k] * overlapFraction(k, j, c);
  }
}

export interface SelectionScores {
  /** p_slc [T,H,nBlocks]. */
  pSlc: Float64Array;
  /** Group scores P [T,G,nBlocks] = Σ over the group's heads of p_slc (heads ascending). */
  scores: Float64Array;
}

/** From p_cmp [T,H,Ncmp]. nBlocks = numSelBlocks(T). */
export function selectionScoresRef(pCmp: ArrayLike<number>, shape: NsaShape, c: NsaConfig): SelectionScores {
  const { T, H, G } = shape;
  const N = numCmpBlocks(T, c);
  const nB = numSelBlocks(T, c);
  const h = H / G;
  const pSlc = new Float64Array(T * H * nB);
  const scores = new Float64Array(T * G * nB);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < H; i++) selectionScoresRow(pCmp, (t * H + i) * N, t, c, pSlc, (t * H + i) * nB);
    for (let g = 0; g < G; g++) {
      groupSumRow(pSlc, t * H + g * h, h, nB, scores, (t * G + g) * nB);
    }
  }
  return { pSlc, scores };
}

/** out[outOff + j] = Σ_{m<h} pSlc[(row0 + m)·nB + j], summed in ascending m. */
export function groupSumRow(pSlc: ArrayLike<number>, row0: number, h: number, nB: number, out: Float64Array, outOff: number): void {
  for (let j = 0; j < nB; j++) {
    let s = 0;
    for (let m = 0; m < h; m++) s += pSlc[(row0 + m) * nB + j];
    out[outOff + j] = s;
  }
}

/**
 * Top-n of query t from its group scores P[pOff + j]: forced blocks first (spec order), then the
 * other candidates by descending P, ties to the lower j; written ascending, −1 padded, to
 * out[outOff..outOff+nSel).
 */
export function selectTopRow(P: ArrayLike<number>, pOff: number, t: number, c: NsaConfig, out: Int32Array, outOff: number): void {
  const nb = numSelCandidates(t, c);
  const take = Math.min(c.nSel, nb);
  const chosen: number[] = [];
  for (const j of forcedBlocks(t, c)) if (chosen.length < take) chosen.push(j);
  const rest: number[] = [];
  for (let j = 0; j < nb; j++) {
    if (Number.isNaN(P[pOff + j])) throw new Error(`selection: NaN score at t=${t}, block ${j}`);
    if (!chosen.includes(j)) rest.push(j);
  }
  rest.sort((a, b) => P[pOff + b] - P[pOff + a] || a - b);
  for (let m = 0; chosen.length < take; m++) chosen.push(rest[m]);
  chosen.sort((a, b) => a - b);
  for (let m = 0; m < c.nSel; m++) out[outOff + m] = m < take ? chosen[m] : -1;
}

/** Selection int32 [T,G,nSel] from scores [T,G,nBlocks]. */
export function selectBlocksRef(scores: ArrayLike<number>, shape: NsaShape, c: NsaConfig): Int32Array {
  const { T, G } = shape;
  const nB = numSelBlocks(T, c);
  const sel = new Int32Array(T * G * c.nSel);
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) selectTopRow(scores, (t * G + g) * nB, t, c, sel, (t * G + g) * c.nSel);
  }
  return sel;
}

export interface ReverseIndex {
  /** [G·nBlocks + 1]: the queries of (g, j) are queries[offsets[g·nB+j] .. offsets[g·nB+j+1]). */
  offsets: Int32Array;
  /** Ascending within each (g, j). */
  queries: Int32Array;
}

/** Count, prefix-sum, fill — the order a kernel would use. */
export function selectionReverseIndex(sel: ArrayLike<number>, shape: NsaShape, c: NsaConfig): ReverseIndex {
  const { T, G } = shape;
  const nB = numSelBlocks(T, c);
  const offsets = new Int32Array(G * nB + 1);
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) {
      for (let m = 0; m < c.nSel; m++) {
        const j = sel[(t * G + g) * c.nSel + m];
        if (j >= 0) offsets[g * nB + j + 1]++;
      }
    }
  }
  for (let r = 0; r < G * nB; r++) offsets[r + 1] += offsets[r];
  const queries = new Int32Array(offsets[G * nB]);
  const fill = offsets.slice(0, G * nB);
  for (let t = 0; t < T; t++) {
    for (let g = 0; g < G; g++) {
      for (let m = 0; m < c.nSel; m++) {
        const j = sel[(t * G + g) * c.nSel + m];
        if (j >= 0) queries[fill[g * nB + j]++] = t;
      }
    }
  }
  return { offsets, queries };
}
