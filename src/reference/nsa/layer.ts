// The whole NSA attention of one sequence given its inputs (after the projections and RoPE):
// compression → compressed branch → selection scores → top-n → selected branch, window branch,
// gated mix. Selection is not differentiated through; the backward takes it from the forward.
import { numCmpBlocks, numSelBlocks } from '../../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig, type NsaShape } from '../../definitions/nsa-config';
import type { AttentionForward } from './attention';
import { compressedBackwardRef, compressedForwardRef } from './compressed';
import { type CmpMlpGrads, type CmpMlpPair, compressBackwardRef, compressRef } from './compression';
import { combineBackwardRef, combineRef } from './gates';
import { selectedBackwardRef, selectedForwardRef } from './selected';
import { selectBlocksRef, selectionScoresRef } from './selection';
import { windowBackwardRef, windowForwardRef } from './window';

/**
 * What NSA attention reads, for a sequence (NsaInputs) or one decode token (NsaDecodeToken): the
 * queries, each branch's keys and values, and the gate values (after the sigmoid and any
 * ablation) in order (cmp, sel, win).
 */
export interface NsaBranchInputs {
  q: ArrayLike<number>;
  kCmp: ArrayLike<number>;
  vCmp: ArrayLike<number>;
  kSel: ArrayLike<number>;
  vSel: ArrayLike<number>;
  kWin: ArrayLike<number>;
  vWin: ArrayLike<number>;
  gates: ArrayLike<number>;
}

/**
 * A sequence's inputs: q [T,H,dk], per branch k [T,G,dk] / v [T,G,dv] (a shared-KV model passes one
 * pair thrice and sums the grads), gates [T,H,3].
 */
export interface NsaInputs extends NsaBranchInputs {
  /** Required for φ = mlp. */
  mlp?: CmpMlpPair;
}

export interface NsaForward {
  nCmp: number;
  nBlocks: number;
  /** Compressed keys/values [Ncmp,G,dk] / [Ncmp,G,dv]. */
  kc: Float64Array;
  vc: Float64Array;
  /** φ = mlp pre-activations [Ncmp,G,Dh] (empty for avg). */
  hPreK: Float64Array;
  hPreV: Float64Array;
  /** p_cmp [T,H,Ncmp]. */
  pCmp: Float64Array;
  /** p_slc [T,H,nBlocks]. */
  pSlc: Float64Array;
  /** Group scores P [T,G,nBlocks]. */
  scores: Float64Array;
  /** int32 [T,G,nSel], ascending, −1 padded. */
  selection: Int32Array;
  /** Branch outputs [T,H,dv] and log-sum-exps [H,T] (lse −Infinity where a branch has no key). */
  cmp: AttentionForward;
  sel: AttentionForward;
  win: AttentionForward;
  /** Gated output [T,H,dv]. */
  o: Float64Array;
}

export interface NsaForwardOptions {
  /** Use this selection instead of computing it (finite differences with the selection frozen). */
  selection?: Int32Array;
}

export function nsaForwardRef(inp: NsaInputs, shape: NsaShape, c: NsaConfig, opts: NsaForwardOptions = {}): NsaForward {
  assertNsaConfig(c, shape);
  checkSizes(inp, shape);
  const { T, H, G, dk, dv } = shape;
  const K = compressRef(inp.kCmp, T, G, dk, c, inp.mlp?.k);
  const V = compressRef(inp.vCmp, T, G, dv, c, inp.mlp?.v);
  const cmp = compressedForwardRef(inp.q, K.out, V.out, shape, c);
  const { pSlc, scores } = selectionScoresRef(cmp.p, shape, c);
  const selection = opts.selection ?? selectBlocksRef(scores, shape, c);
  const sel = selectedForwardRef(inp.q, inp.kSel, inp.vSel, selection, shape, c);
  const win = windowForwardRef(inp.q, inp.kWin, inp.vWin, shape, c);
  const o = combineRef(cmp.o, sel.o, win.o, inp.gates, T, H, dv);
  return {
    nCmp: numCmpBlocks(T, c),
    nBlocks: numSelBlocks(T, c),
    kc: K.out,
    vc: V.out,
    hPreK: K.hPre,
    hPreV: V.hPre,
    pCmp: cmp.p,
    pSlc,
    scores,
    selection,
    cmp: { o: cmp.o, lse: cmp.lse },
    sel,
    win,
    o,
  };
}

export interface NsaGrads {
  dq: Float64Array;
  dkCmp: Float64Array;
  dvCmp: Float64Array;
  dkSel: Float64Array;
  dvSel: Float64Array;
  dkWin: Float64Array;
  dvWin: Float64Array;
  /** ∂L/∂gates [T,H,3] (feed gateAblationBackward, then gateBackwardRef). */
  dGates: Float64Array;
  /** φ = mlp only. */
  dMlpK?: CmpMlpGrads;
  dMlpV?: CmpMlpGrads;
}

/** Backward given dO [T,H,dv] and the forward's intermediates. */
export function nsaBackwardRef(inp: NsaInputs, shape: NsaShape, c: NsaConfig, fwd: NsaForward, dO: ArrayLike<number>): NsaGrads {
  const { T, H, G, dk, dv } = shape;
  const mix = combineBackwardRef(dO, fwd.cmp.o, fwd.sel.o, fwd.win.o, inp.gates, T, H, dv);
  const gCmp = compressedBackwardRef(inp.q, fwd.kc, fwd.vc, fwd.cmp, mix.dOCmp, shape, c);
  const gSel = selectedBackwardRef(inp.q, inp.kSel, inp.vSel, fwd.selection, fwd.sel, mix.dOSel, shape, c);
  const gWin = windowBackwardRef(inp.q, inp.kWin, inp.vWin, fwd.win, mix.dOWin, shape, c);
  const dK = compressBackwardRef(inp.kCmp, T, G, dk, c, { out: fwd.kc, hPre: fwd.hPreK }, gCmp.dK, inp.mlp?.k);
  const dV = compressBackwardRef(inp.vCmp, T, G, dv, c, { out: fwd.vc, hPre: fwd.hPreV }, gCmp.dV, inp.mlp?.v);
  const dq = new Float64Array(T * H * dk);
  for (let x = 0; x < dq.length; x++) dq[x] = gCmp.dq[x] + gSel.dq[x] + gWin.dq[x];
  const out: NsaGrads = {
    dq,
    dkCmp: dK.dX,
    dvCmp: dV.dX,
    dkSel: gSel.dK,
    dvSel: gSel.dV,
    dkWin: gWin.dK,
    dvWin: gWin.dV,
    dGates: mix.dGates,
  };
  if (dK.dW) out.dMlpK = dK.dW;
  if (dV.dW) out.dMlpV = dV.dW;
  return out;
}

function checkSizes(inp: NsaInputs, s: NsaShape): void {
  const want: Array<[string, ArrayLike<number>, number]> = [
    ['q', inp.q, s.T * s.H * s.dk],
    ['kCmp', inp.kCmp, s.T * s.G * s.dk],
    ['vCmp', inp.vCmp, s.T * s.G * s.dv],
    ['kSel', inp.kSel, s.T * s.G * s.dk],
    ['vSel', inp.vSel, s.T * s.G * s.dv],
    ['kWin', inp.kWin, s.T * s.G * s.dk],
    ['vWin', inp.vWin, s.T * s.G * s.dv],
    ['gates', inp.gates, s.T * s.H * 3],
  ];
  for (const [name, a, n] of want) {
    if (a.length !== n) throw new Error(`nsa reference: ${name} has ${a.length} values, expected ${n}`);
  }
}
