// DSA decode with a KV cache in the float64 twin (docs/dsa-spec.md section 7): token by token equals
// the prefill bit for bit (scores, selection, output, lse), and the rows read per token are the
// formula's: min(k, t + 1) main K/V rows per group and t + 1 indexer keys.
import { describe, expect, it } from 'vitest';

import { dsaIndexKeysRead, dsaKeysRead } from '../../src/definitions/dsa-config';
import { dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { DsaDecodeRef } from '../../src/reference/dsa/decode';
import { indexScoresRef } from '../../src/reference/dsa/indexer';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { rng } from '../helpers/compare';
import { randomDsaInputs } from './helpers';

describe('DSA decode = prefill (bit for bit), keys read = formula', () => {
  it.each([
    { T: 19, k: 5, H: 4, G: 2, HI: 3, dI: 4 },
    { T: 7, k: 9, H: 2, G: 1, HI: 1, dI: 2 },
    { T: 12, k: 1, H: 3, G: 3, HI: 2, dI: 4 },
  ])('T=$T k=$k H=$H G=$G', ({ T, k, H, G, HI, dI }) => {
    const shape = { T, H, G, dk: 4, dv: 3 };
    const cfg = { indexHeads: HI, indexDim: dI, topK: k, warmupSteps: 0, lossWeight: 1 };
    const d = { T, indexHeads: HI, indexDim: dI };
    const x = randomDsaInputs(shape, d, rng(T + k));
    const I = indexScoresRef(x.qI, x.kI, x.wI, d);
    const sel = selectTokensRef(I, T, G, k);
    const fwd = dsaAttentionForwardRef(x.q, x.K, x.V, sel, shape, k);
    const dec = new DsaDecodeRef({ H, G, dk: 4, dv: 3, capacity: T }, cfg);
    const row = (a: Float64Array, t: number, n: number) => a.subarray(t * n, (t + 1) * n);
    for (let t = 0; t < T; t++) {
      const st = dec.step({
        q: row(x.q, t, H * 4),
        k: row(x.K, t, G * 4),
        v: row(x.V, t, G * 3),
        qI: row(x.qI, t, HI * dI),
        kI: row(x.kI, t, dI),
        wI: row(x.wI, t, HI),
      });
      expect(Array.from(st.scores), `scores t=${t}`).toEqual(Array.from(I.subarray(t * T, t * T + t + 1)));
      expect(Array.from(st.selection), `selection t=${t}`).toEqual(Array.from(sel.subarray(t * G * k, t * G * k + k)));
      expect(Array.from(st.o), `o t=${t}`).toEqual(Array.from(row(fwd.o, t, H * 3)));
      for (let i = 0; i < H; i++) expect(st.lse[i], `lse t=${t} head ${i}`).toBe(fwd.lse[i * T + t]);
      expect(st.keysRead, `keys read t=${t}`).toEqual(new Array<number>(G).fill(dsaKeysRead(t, k)));
      expect(st.indexKeysRead).toBe(dsaIndexKeysRead(t));
    }
    expect(() => dec.step({ q: [], k: [], v: [], qI: [], kI: [], wI: [] })).toThrow(/cache full/);
  });
});
