// Float64 top-k token selection (docs/dsa-spec.md section 3): query t takes min(k, t + 1) of the
// tokens s ≤ t by descending I[t, s], ties to the lower s, written ascending and −1 padded; one
// selection per query, copied into every group's row of sel [T, G, k]. Also the selection's key
// pattern for the shared sparse attention of src/reference/nsa/attention.ts.
import { selectedTokenCount } from '../../definitions/dsa-config';
import type { KeyPattern } from '../nsa/attention';

/** The selection of query t from I[iOff + s], s ≤ t, into out[outOff .. outOff + k). */
export function selectTokensRow(I: ArrayLike<number>, iOff: number, t: number, k: number, out: Int32Array, outOff: number): void {
  const cand: number[] = [];
  for (let s = 0; s <= t; s++) {
    if (Number.isNaN(I[iOff + s])) throw new Error(`dsa top-k: NaN score at t=${t}, token ${s}`);
    cand.push(s);
  }
  // −0 and +0 compare equal here (b − a is 0 for them), so they tie and go to the lower s.
  cand.sort((a, b) => I[iOff + b] - I[iOff + a] || a - b);
  const take = selectedTokenCount(t, k);
  const chosen = cand.slice(0, take).sort((a, b) => a - b);
  for (let m = 0; m < k; m++) out[outOff + m] = m < take ? chosen[m] : -1;
}

/** sel int32 [T, G, k] from I [T, T]; every group's row is the same. */
export function selectTokensRef(I: ArrayLike<number>, T: number, G: number, k: number): Int32Array {
  const sel = new Int32Array(T * G * k);
  for (let t = 0; t < T; t++) {
    selectTokensRow(I, t * T, t, k, sel, t * G * k);
    for (let g = 1; g < G; g++) sel.copyWithin((t * G + g) * k, t * G * k, (t * G + 1) * k);
  }
  return sel;
}

/** The tokens of (t, g)'s row, ascending. */
export function selectedTokens(sel: ArrayLike<number>, t: number, g: number, G: number, k: number): number[] {
  const out: number[] = [];
  for (let m = 0; m < k; m++) {
    const s = sel[(t * G + g) * k + m];
    if (s < 0) break;
    out.push(s);
  }
  return out;
}

/** keys(t, g): the row's tokens; queries(s, g): the t (ascending) whose row holds s. */
export function tokenPattern(sel: ArrayLike<number>, T: number, G: number, k: number): KeyPattern {
  let rev: number[][][] | undefined; // [g][s] → queries; built on first use
  return {
    keys: (t, g) => selectedTokens(sel, t, g, G, k),
    queries: (s, g) => {
      if (!rev) {
        const r: number[][][] = Array.from({ length: G }, () => Array.from({ length: T }, () => []));
        for (let t = 0; t < T; t++) for (let gg = 0; gg < G; gg++) for (const u of selectedTokens(sel, t, gg, G, k)) r[gg][u].push(t);
        rev = r;
      }
      return rev[g][s];
    },
  };
}
