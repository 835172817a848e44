// Wrapper for shaders/dsa_index_backward.wgsl (with shaders/dsa_slots.wgsl, sel_lower_bound.wgsl): the DSA indexer's
// backward from dScores [B,T,W] by slot (docs/dsa-spec.md section 5), gathered without atomics:
// queryGrads writes dqI [B,T,H_I,d_I] and dwI [B,T,H_I] per query row, keyGrads dkI [B,T,d_I] per
// key row over the queries reading it. In the sparse phase keyGrads walks the reverse index of
// sel [B,T,G,k] that nsaReverseIndexDispatches builds with tokenSelectionAsNsa(k) (group 0's
// lists); in the warm-up it is bound but not read.
import code from '../../shaders/dsa_index_backward.wgsl?raw';
import slotsCode from '../../shaders/dsa_slots.wgsl?raw';
import lowerBoundCode from '../../shaders/sel_lower_bound.wgsl?raw';
import { type DsaPhase, dsaSlotWidth, indexScale, tokenSelectionAsNsa } from '../definitions/dsa-config';
import type { BufferSlice } from '../gpu/arena';
import { checkMax, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { checkDsaShape, type DsaKernelShape } from './dsa-index-scores';
import { nsaReverseIndexLengths } from './nsa-reverse-index';

const WG = 64;
const F = 'array<f32>';
/** Widest indexer head the per-invocation accumulators hold (MAX_DI in the shader). */
export const DSA_MAX_INDEX_DIM = 128;

export const DSA_INDEX_BACKWARD_KERNEL = defineKernel({
  name: 'dsa_index_backward',
  files: [
    ['dsa_slots.wgsl', slotsCode],
    ['sel_lower_bound.wgsl', lowerBoundCode],
    ['dsa_index_backward.wgsl', code],
  ],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['G', 'u32'],
        ['topK', 'u32', 'k'],
        ['W', 'u32', 'slots per row: T (warm-up) or k (sparse)'],
        ['dense', 'u32', '1 in the warm-up: slot m is token m'],
        ['rows', 'u32', 'B·T'],
        ['indexHeads', 'u32', 'H_I'],
        ['indexDim', 'u32', 'd_I'],
        ['R', 'u32', 'reverse-index lists B·G·T'],
        ['scale', 'f32', '1/√(H_I·d_I)'],
      ],
    },
  },
  // The five inputs first in both entries: a name keeps one binding index (kernelHeader).
  entries: {
    queryGrads: [
      ['qI', F],
      ['kI', F],
      ['wI', F],
      ['dScores', F],
      ['sel', 'array<i32>'],
      ['dqI', F],
      ['dwI', F],
    ],
    keyGrads: [
      ['qI', F],
      ['kI', F],
      ['wI', F],
      ['dScores', F],
      ['sel', 'array<i32>'],
      ['reverse', 'array<i32>'],
      ['dkI', F],
    ],
  },
});

export const DSA_INDEX_BACKWARD_VARIANTS: readonly KernelVariant[] = (['queryGrads', 'keyGrads'] as const).map((entryPoint) => ({
  kernel: DSA_INDEX_BACKWARD_KERNEL,
  entryPoint,
  constants: { WG },
}));

export interface DsaIndexBackwardArgs extends DsaKernelShape {
  phase: DsaPhase;
  qI: BufferSlice;
  kI: BufferSlice;
  wI: BufferSlice;
  dScores: BufferSlice;
  sel: BufferSlice;
  /** nsa_reverse_index's `queries` for sel (tokenSelectionAsNsa(k)); not read in the warm-up. */
  reverse: BufferSlice;
  dqI: BufferSlice;
  dwI: BufferSlice;
  dkI: BufferSlice;
}

/** Two dispatches: queryGrads (dqI, dwI), then keyGrads (dkI). */
export async function dsaIndexBackwardDispatches(gpu: GpuContext, a: DsaIndexBackwardArgs): Promise<Dispatch[]> {
  const label = 'dsa.indexBackward';
  checkDsaShape(label, a);
  const { B, T, G, cfg } = a;
  checkMax(label, 'cfg.indexDim', cfg.indexDim, DSA_MAX_INDEX_DIM, '(the shader accumulates d_I values per invocation)');
  const W = dsaSlotWidth(a.phase, T, cfg.topK);
  const HI = cfg.indexHeads;
  const dI = cfg.indexDim;
  const rev = nsaReverseIndexLengths(a, tokenSelectionAsNsa(cfg.topK));
  const inputs = {
    qI: [a.qI, B * T * HI * dI],
    kI: [a.kI, B * T * dI],
    wI: [a.wI, B * T * HI],
    dScores: [a.dScores, B * T * W],
    sel: [a.sel, B * T * G * cfg.topK],
  } as const;
  checkSlices(label, {
    ...inputs,
    reverse: [a.reverse, rev.queries],
    dqI: [a.dqI, B * T * HI * dI],
    dwI: [a.dwI, B * T * HI],
    dkI: [a.dkI, B * T * dI],
  });
  const P = {
    T,
    G,
    topK: cfg.topK,
    W,
    dense: a.phase === 'warmup' ? 1 : 0,
    rows: B * T,
    indexHeads: HI,
    indexDim: dI,
    R: rev.counts,
    scale: indexScale(cfg),
  };
  const shared = { qI: a.qI, kI: a.kI, wI: a.wI, dScores: a.dScores, sel: a.sel };
  const K = DSA_INDEX_BACKWARD_KERNEL;
  return [
    await kernelDispatch(
      gpu,
      K,
      'queryGrads',
      { uniforms: { P }, storage: { ...shared, dqI: a.dqI, dwI: a.dwI }, constants: { WG }, label: `${label}.query` },
      grid1d(ceilDiv(B * T * HI, WG)),
    ),
    await kernelDispatch(
      gpu,
      K,
      'keyGrads',
      { uniforms: { P }, storage: { ...shared, reverse: a.reverse, dkI: a.dkI }, constants: { WG }, label: `${label}.key` },
      grid1d(ceilDiv(B * T, WG)),
    ),
  ];
}
