// Wrapper for shaders/dsa_index_scores.wgsl: the DSA lightning indexer's scores
// scores [B, T, T] = scale · Σ_j wI · ReLU(qI · kI) for s ≤ t, 0 above the diagonal
// (docs/dsa-spec.md section 2). qI [B, T, H_I, d_I], kI [B, T, d_I], wI [B, T, H_I].
import code from '../../shaders/dsa_index_scores.wgsl?raw';
import { assertDsaConfig, type DsaConfig, indexScale } from '../definitions/dsa-config';
import type { AttentionShape } from '../definitions/shapes';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkMax, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 64;
const F = 'array<f32>';

export const DSA_INDEX_SCORES_KERNEL = defineKernel({
  name: 'dsa_index_scores',
  files: [['dsa_index_scores.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['T', 'u32'],
        ['indexHeads', 'u32', 'H_I'],
        ['indexDim', 'u32', 'd_I'],
        ['total', 'u32', 'B·T·T'],
        ['scale', 'f32', '1/√(H_I·d_I)'],
      ],
    },
  },
  entries: {
    indexScores: [
      ['qI', F],
      ['kI', F],
      ['wI', F],
      ['scores', F],
    ],
  },
});

export const DSA_INDEX_SCORES_VARIANTS: readonly KernelVariant[] = [
  { kernel: DSA_INDEX_SCORES_KERNEL, entryPoint: 'indexScores', constants: { WG } },
];

/** The shape and config every DSA kernel wrapper takes (validated before any GPU work). */
export type DsaKernelShape = AttentionShape & { cfg: DsaConfig };

/** checkDims and assertDsaConfig of a DSA wrapper's shape; T·T per sequence must fit u32 indices. */
export function checkDsaShape(label: string, a: DsaKernelShape): void {
  checkDims(label, { B: a.B, T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  assertDsaConfig(a.cfg, { T: a.T, H: a.H, G: a.G, dk: a.dk, dv: a.dv });
  checkMax(label, 'T', a.B * a.T * a.T, 2 ** 32 - 1, '(B·T·T scores: u32 indices)');
}

/** scores [B, T, T] from qI, kI, wI (overwritten, upper triangle 0). */
export async function dsaIndexScoresDispatch(
  gpu: GpuContext,
  a: DsaKernelShape & { qI: BufferSlice; kI: BufferSlice; wI: BufferSlice; scores: BufferSlice },
): Promise<Dispatch> {
  const label = 'dsa.indexScores';
  checkDsaShape(label, a);
  const { B, T, cfg } = a;
  const total = B * T * T;
  checkSlices(label, {
    qI: [a.qI, B * T * cfg.indexHeads * cfg.indexDim],
    kI: [a.kI, B * T * cfg.indexDim],
    wI: [a.wI, B * T * cfg.indexHeads],
    scores: [a.scores, total],
  });
  return kernelDispatch(
    gpu,
    DSA_INDEX_SCORES_KERNEL,
    'indexScores',
    {
      uniforms: { P: { T, indexHeads: cfg.indexHeads, indexDim: cfg.indexDim, total, scale: indexScale(cfg) } },
      storage: { qI: a.qI, kI: a.kI, wI: a.wI, scores: a.scores },
      constants: { WG },
      label,
    },
    grid1d(ceilDiv(total, WG)),
  );
}
