// Wrapper for shaders/dsa_index_loss.wgsl (with shaders/dsa_slots.wgsl): the DSA indexer's KL loss
// per query row and its gradient by slot (docs/dsa-spec.md section 5). The target is the main
// attention's distribution over the row's slots, recomputed from q [B,T,H,dk], k [B,T,G,dk] and the
// main attention's lse [B,H,T]; scores [B,T,T]; sel [B,T,G,k] (read in the sparse phase only, bound
// in both). Writes klRows [B,T] (unweighted KL) and dScores [B,T,W] = gradScale·(r − p),
// W = dsaSlotWidth(phase, T, k).
import code from '../../shaders/dsa_index_loss.wgsl?raw';
import slotsCode from '../../shaders/dsa_slots.wgsl?raw';
import { type DsaPhase, dsaSlotWidth } from '../definitions/dsa-config';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { checkDsaShape, type DsaKernelShape } from './dsa-index-scores';

const WG = 64;
const F = 'array<f32>';

export const DSA_INDEX_LOSS_KERNEL = defineKernel({
  name: 'dsa_index_loss',
  files: [
    ['dsa_slots.wgsl', slotsCode],
    ['dsa_index_loss.wgsl', code],
  ],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['H', 'u32'],
        ['G', 'u32'],
        ['dk', 'u32'],
        ['topK', 'u32', 'k'],
        ['W', 'u32', 'slots per row: T (warm-up) or k (sparse)'],
        ['dense', 'u32', '1 in the warm-up: slot m is token m'],
        ['rows', 'u32', 'B·T'],
        ['scale', 'f32', '1/√dk of the main attention'],
        ['gradScale', 'f32', 'λ/(B·T)'],
      ],
    },
  },
  entries: {
    indexLoss: [
      ['q', F],
      ['k', F],
      ['lse', F],
      ['scores', F],
      ['sel', 'array<i32>'],
      ['dScores', F],
      ['klRows', F],
    ],
  },
});

export const DSA_INDEX_LOSS_VARIANTS: readonly KernelVariant[] = [
  { kernel: DSA_INDEX_LOSS_KERNEL, entryPoint: 'indexLoss', constants: { WG } },
];

export interface DsaIndexLossArgs extends DsaKernelShape {
  phase: DsaPhase;
  /** λ/(B·T): dScores = ∂(gradScale·Σ klRows)/∂scores. */
  gradScale: number;
  q: BufferSlice;
  k: BufferSlice;
  lse: BufferSlice;
  scores: BufferSlice;
  sel: BufferSlice;
  dScores: BufferSlice;
  klRows: BufferSlice;
}

export async function dsaIndexLossDispatch(gpu: GpuContext, a: DsaIndexLossArgs): Promise<Dispatch> {
  const label = 'dsa.indexLoss';
  checkDsaShape(label, a);
  if (!Number.isFinite(a.gradScale)) argumentError(label, 'gradScale', `gradScale must be finite (got ${a.gradScale})`);
  const { B, T, H, G, dk, cfg } = a;
  const W = dsaSlotWidth(a.phase, T, cfg.topK);
  checkSlices(label, {
    q: [a.q, B * T * H * dk],
    k: [a.k, B * T * G * dk],
    lse: [a.lse, B * H * T],
    scores: [a.scores, B * T * T],
    sel: [a.sel, B * T * G * cfg.topK],
    dScores: [a.dScores, B * T * W],
    klRows: [a.klRows, B * T],
  });
  const P = {
    T,
    H,
    G,
    dk,
    topK: cfg.topK,
    W,
    dense: a.phase === 'warmup' ? 1 : 0,
    rows: B * T,
    scale: 1 / Math.sqrt(dk),
    gradScale: a.gradScale,
  };
  const storage = { q: a.q, k: a.k, lse: a.lse, scores: a.scores, sel: a.sel, dScores: a.dScores, klRows: a.klRows };
  return kernelDispatch(
    gpu,
    DSA_INDEX_LOSS_KERNEL,
    'indexLoss',
    { uniforms: { P }, storage, constants: { WG }, label },
    grid1d(ceilDiv(B * T, WG)),
  );
}
