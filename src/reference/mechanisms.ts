// Float64 twins of the mechanisms of docs/nsa-spec.md section 15, one sequence at a time: the
// window mechanism (NSA's window branch alone) and MoBA (block means = φ = avg compression with
// l = d = lSel = B, scores and top-k = NSA's selection with forceInit false and forceLocal 1, the
// selected branch over the chosen blocks). Built from the NSA references, with only the pieces the
// mechanism uses: a window model computes no compression or selection, MoBA no compressed-branch
// output and no window. The selection is not differentiated (no gradient through the block means).
import { mobaAsNsa, type MobaConfig, windowAsNsa, type WindowConfig } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { numCmpBlocks, numSelBlocks } from '../definitions/nsa-blocks';
import type { NsaShape } from '../definitions/nsa-config';
import type { AttentionForward, AttentionGrads } from './nsa/attention';
import { compressedForwardRef } from './nsa/compressed';
import { compressRef } from './nsa/compression';
import { selectedBackwardRef, selectedForwardRef } from './nsa/selected';
import { selectBlocksRef, selectionScoresRef } from './nsa/selection';
import { windowBackwardRef, windowForwardRef } from './nsa/window';

export interface MobaForward extends AttentionForward {
  /** Complete blocks of the sequence (block means). */
  nMeans: number;
  /** Blocks of the sequence, ceil(T / B). */
  nBlocks: number;
  /** Block means k̄ [nMeans, G, dk]. */
  means: Float64Array;
  /** Per-head block probabilities p [T, H, nMeans] (0 where not visible). */
  p: Float64Array;
  /** Group scores P [T, G, nBlocks]. */
  scores: Float64Array;
  /** int32 [T, G, topK], ascending, −1 padded. */
  selection: Int32Array;
}

/** MoBA of one sequence: q [T,H,dk], k [T,G,dk], v [T,G,dv]; `selection` replaces the computed one (frozen). */
export function mobaForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  shape: NsaShape,
  c: MobaConfig,
  selection?: Int32Array,
): MobaForward {
  const cfg = mobaAsNsa(c);
  const { T, G, dk } = shape;
  const nMeans = numCmpBlocks(T, cfg);
  const means = compressRef(k, T, G, dk, cfg).out;
  // The probabilities only: the compressed branch's output is never used (values of width 1, zeros).
  const p = compressedForwardRef(q, means, new Float64Array(nMeans * G), { ...shape, dv: 1 }, cfg).p;
  const { scores } = selectionScoresRef(p, shape, cfg);
  const sel = selection ?? selectBlocksRef(scores, shape, cfg);
  const att = selectedForwardRef(q, k, v, sel, shape, cfg);
  return { ...att, nMeans, nBlocks: numSelBlocks(T, cfg), means, p, scores, selection: sel };
}

/** MoBA backward: the selected branch's, on the forward's selection. */
export function mobaBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  fwd: MobaForward,
  dO: ArrayLike<number>,
  shape: NsaShape,
  c: MobaConfig,
): AttentionGrads {
  return selectedBackwardRef(q, k, v, fwd.selection, fwd, dO, shape, mobaAsNsa(c));
}

/** Sliding-window attention of one sequence (the window branch of section 8). */
export function windowMechForwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  shape: NsaShape,
  c: WindowConfig,
): AttentionForward {
  return windowForwardRef(q, k, v, shape, windowAsNsa(c));
}

export function windowMechBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  fwd: AttentionForward,
  dO: ArrayLike<number>,
  shape: NsaShape,
  c: WindowConfig,
): AttentionGrads {
  return windowBackwardRef(q, k, v, fwd, dO, shape, windowAsNsa(c));
}

/** One sequence's forward of a window or MoBA layer (MobaForward for MoBA). */
export type MechanismSeqForward = AttentionForward | MobaForward;

/** Rows [b·T, (b+1)·T) of a [B·T, width] tensor. */
const seq = (x: Float64Array, b: number, T: number, width: number) => x.subarray(b * T * width, (b + 1) * T * width);

/**
 * A window or MoBA model layer's attention over B sequences: q [B·T, H·dk] (RoPE'd), the one K/V
 * pair [B·T, G·dk|dv]; MoBA's `selections` ([B, T, G, topK]) replace the computed ones.
 */
export function mechanismForward64(
  c: ModelConfig,
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  B: number,
  selections?: Int32Array,
): { out: Float64Array; seqs: MechanismSeqForward[] } {
  const T = c.seqLen;
  const shape: NsaShape = { T, H: c.nHeads, G: c.nKvGroups, dk: c.dk, dv: c.dv };
  const { H, G, dk, dv } = shape;
  const out = new Float64Array(B * T * H * dv);
  const seqs: MechanismSeqForward[] = [];
  for (let b = 0; b < B; b++) {
    const [qb, kb, vb] = [seq(q, b, T, H * dk), seq(k, b, T, G * dk), seq(v, b, T, G * dv)];
    let fwd: MechanismSeqForward;
    switch (c.attention) {
      case 'window':
        fwd = windowMechForwardRef(qb, kb, vb, shape, c.window!);
        break;
      case 'moba': {
        const per = T * G * c.moba!.topK;
        fwd = mobaForwardRef(qb, kb, vb, shape, c.moba!, selections?.subarray(b * per, (b + 1) * per));
        break;
      }
      default:
        throw new Error(`mechanismForward64: attention '${c.attention}' is not a window or MoBA layer`);
    }
    out.set(fwd.o, b * T * H * dv);
    seqs.push(fwd);
  }
  return { out, seqs };
}

/** Gradients of a window or MoBA layer's q, k, v from d(attention output) [B·T, H·dv]. */
export function mechanismBackward64(
  c: ModelConfig,
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  seqs: readonly MechanismSeqForward[],
  dattn: Float64Array,
  B: number,
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const T = c.seqLen;
  const shape: NsaShape = { T, H: c.nHeads, G: c.nKvGroups, dk: c.dk, dv: c.dv };
  const { H, G, dk, dv } = shape;
  const out = { dq: new Float64Array(B * T * H * dk), dk: new Float64Array(B * T * G * dk), dv: new Float64Array(B * T * G * dv) };
  seqs.forEach((fwd, b) => {
    const [qb, kb, vb, dO] = [seq(q, b, T, H * dk), seq(k, b, T, G * dk), seq(v, b, T, G * dv), seq(dattn, b, T, H * dv)];
    const g =
      c.attention === 'moba'
        ? mobaBackwardRef(qb, kb, vb, fwd as MobaForward, dO, shape, c.moba!)
        : windowMechBackwardRef(qb, kb, vb, fwd, dO, shape, c.window!);
    out.dq.set(g.dq, b * T * H * dk);
    out.dk.set(g.dK, b * T * G * dk);
    out.dv.set(g.dV, b * T * G * dv);
  });
  return out;
}
