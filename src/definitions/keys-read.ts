// Key rows a query reads per KV group under each mechanism whose count does not depend on what it
// selected (docs/nsa-spec.md sections 10 and 15, docs/dsa-spec.md section 7): dense t + 1; the
// window min(w, t + 1); MoBA its own block's positions ≤ t plus topK − 1 complete earlier blocks
// (every candidate but its own block is complete, so which ones it picks does not change the
// count); DSA min(topK, t + 1) main rows (its narrow indexer keys are counted apart). NSA's count
// depends on which blocks are full and its window: src/ui/config/derived.ts (keyReads).
import type { MobaConfig, WindowConfig } from './mechanisms';
import { visibleCmpBlocks } from './nsa-blocks';
import type { NsaConfig } from './nsa-config';

/** What a model's attention fields hold, for the count. */
export interface KeysReadFields {
  attention: string;
  window?: WindowConfig;
  moba?: MobaConfig;
  dsa?: { topK: number };
  nsa?: NsaConfig;
}

/** Rows query t reads per group, or null for NSA (or a mechanism whose options are missing). */
export function keysReadAt(t: number, m: KeysReadFields): number | null {
  switch (m.attention) {
    case 'dense':
      return t + 1;
    case 'window':
      return m.window ? Math.min(m.window.w, t + 1) : null;
    case 'moba': {
      if (!m.moba) return null;
      const B = m.moba.blockSize;
      return (t % B) + 1 + Math.min(m.moba.topK - 1, Math.floor(t / B)) * B;
    }
    case 'dsa':
      return m.dsa ? Math.min(m.dsa.topK, t + 1) : null;
    default:
      return null;
  }
}

/** The mean over t = 0 … T − 1 of keysReadAt, or null where it is null. */
export function meanKeysRead(T: number, m: KeysReadFields): number | null {
  if (T < 1 || keysReadAt(0, m) === null) return null;
  let sum = 0;
  for (let t = 0; t < T; t++) sum += keysReadAt(t, m)!;
  return sum / T;
}

/**
 * Rows the last query (t = T − 1) of a T-token sequence reads per group: keysReadAt, and for NSA
 * ncmp(T − 1) + nSel full selected blocks + its window (an upper bound: a selected block may be
 * the query's own, partial one), each capped at the T positions there are.
 */
export function lastQueryKeys(T: number, m: KeysReadFields): number {
  if (m.attention === 'nsa' && m.nsa) {
    const c = m.nsa;
    return visibleCmpBlocks(T - 1, c) + Math.min(c.nSel * c.lSel, T) + Math.min(c.w, T);
  }
  return keysReadAt(T - 1, m) ?? T;
}
