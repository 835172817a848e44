// Shared fixtures for the DSA twin tests (docs/dsa-spec.md): random indexer and attention inputs,
// random valid token selections.
import type { DsaShape } from '../../src/definitions/dsa-config';
import type { IndexerDims } from '../../src/reference/dsa/indexer';
import { randn } from '../helpers/compare';

export interface DsaInputs {
  qI: Float64Array;
  kI: Float64Array;
  wI: Float64Array;
  q: Float64Array;
  K: Float64Array;
  V: Float64Array;
}

export function randomDsaInputs(shape: DsaShape, d: IndexerDims, r: () => number): DsaInputs {
  const { T, H, G, dk, dv } = shape;
  return {
    qI: randn(T * d.indexHeads * d.indexDim, r),
    kI: randn(T * d.indexDim, r),
    wI: randn(T * d.indexHeads, r),
    q: randn(T * H * dk, r),
    K: randn(T * G * dk, r),
    V: randn(T * G * dv, r),
  };
}

/** A random valid selection [T, G, k] (ascending, −1 padded, every group's row equal) ignoring scores. */
export function randomTokenSelection(T: number, G: number, k: number, r: () => number): Int32Array {
  const sel = new Int32Array(T * G * k).fill(-1);
  for (let t = 0; t < T; t++) {
    const cand = Array.from({ length: t + 1 }, (_, s) => s);
    for (let m = cand.length - 1; m > 0; m--) {
      const x = Math.floor(r() * (m + 1));
      [cand[m], cand[x]] = [cand[x], cand[m]];
    }
    const pick = cand.slice(0, Math.min(k, t + 1)).sort((a, b) => a - b);
    for (let g = 0; g < G; g++) sel.set(pick, (t * G + g) * k);
  }
  return sel;
}

export const dotAll = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
