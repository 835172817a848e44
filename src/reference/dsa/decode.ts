// Token-by-token DSA decode with a KV cache (docs/dsa-spec.md section 7): each step appends the
// token's K/V and indexer key kI, scores the cached indexer keys 0 … t, takes the top-k and attends
// over the selected rows — the prefill twin's arithmetic in the same order (indexScore,
// selectTokensRow, sparseAttentionForward), so decode = prefill bit for bit. Reads are counted where
// the rows are fetched: per group the main K/V rows of the selection, once per layer the indexer keys.
import { assertDsaConfig, type DsaConfig, indexScale } from '../../definitions/dsa-config';
import { sparseAttentionForward } from '../nsa/attention';
import { indexScore } from './indexer';
import { selectTokensRow } from './topk';

export interface DsaDecodeDims {
  H: number;
  G: number;
  dk: number;
  dv: number;
  /** Most tokens the cache will hold. */
  capacity: number;
}

/** One token: q [H,dk], k [G,dk], v [G,dv], qI [H_I,d_I], kI [d_I], wI [H_I]. */
export interface DsaDecodeToken {
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  qI: ArrayLike<number>;
  kI: ArrayLike<number>;
  wI: ArrayLike<number>;
}

export interface DsaDecodeStep {
  t: number;
  /** [H, dv]. */
  o: Float64Array;
  /** [H]. */
  lse: Float64Array;
  /** Index scores of tokens 0 … t. */
  scores: Float64Array;
  /** int32 [k], ascending, −1 padded (every group uses it). */
  selection: Int32Array;
  /** Main K/V rows read per group. */
  keysRead: number[];
  /** Indexer key rows read (once for the layer). */
  indexKeysRead: number;
}

export class DsaDecodeRef {
  private readonly K: Float64Array;
  private readonly V: Float64Array;
  private readonly kI: Float64Array;
  private t = 0;

  constructor(
    private readonly dims: DsaDecodeDims,
    private readonly cfg: DsaConfig,
  ) {
    assertDsaConfig(cfg, { H: dims.H, G: dims.G, dk: dims.dk, dv: dims.dv });
    const { G, dk, dv, capacity } = dims;
    this.K = new Float64Array(capacity * G * dk);
    this.V = new Float64Array(capacity * G * dv);
    this.kI = new Float64Array(capacity * cfg.indexDim);
  }

  get length(): number {
    return this.t;
  }

  step(x: DsaDecodeToken): DsaDecodeStep {
    const { H, G, dk, dv, capacity } = this.dims;
    const { indexHeads: HI, indexDim: dI, topK } = this.cfg;
    const t = this.t;
    if (t >= capacity) throw new Error(`dsa decode: cache full (${capacity} tokens)`);
    this.K.set(Array.from(x.k), t * G * dk);
    this.V.set(Array.from(x.v), t * G * dv);
    this.kI.set(Array.from(x.kI), t * dI);
    this.t = t + 1;
    const c = indexScale(this.cfg);
    const scores = new Float64Array(t + 1);
    let indexKeysRead = 0;
    for (let s = 0; s <= t; s++) {
      scores[s] = indexScore(x.qI, 0, x.wI, 0, this.kI, s * dI, HI, dI, c);
      indexKeysRead++;
    }
    const selection = new Int32Array(topK);
    selectTokensRow(scores, 0, t, topK, selection, 0);
    const keys = Array.from(selection).filter((s) => s >= 0);
    const keysRead = new Array<number>(G).fill(0);
    // One query row against the cache: the prefill's sparse attention with this row's keys.
    const fwd = sparseAttentionForward(
      x.q,
      this.K,
      this.V,
      { T: 1, S: t + 1, H, G, dk, dv },
      {
        keys: (_t, g) => {
          keysRead[g] += keys.length;
          return keys;
        },
        queries: () => {
          throw new Error('dsa decode: no backward');
        },
      },
    );
    return { t, o: fwd.o, lse: fwd.lse, scores, selection, keysRead, indexKeysRead };
  }
}
