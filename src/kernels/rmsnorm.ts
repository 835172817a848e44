// Wrapper for shaders/rmsnorm.wgsl.
import code from '../../shaders/rmsnorm.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';
import { rowLanes } from '../gpu/lanes';

const TC = 8; // dweight columns per workgroup (shaders/rmsnorm.wgsl)

export const RMSNORM_KERNEL = defineKernel({
  name: 'rmsnorm',
  files: [['rmsnorm.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['rows', 'u32'],
        ['C', 'u32'],
        ['eps', 'f32'],
        ['accumulate', 'u32', 'backwardDx: 1 → dx += (residual stream), 0 → dx ='],
      ],
    },
  },
  // forward: w = weight, y = out; backwardDweight: w = dweight, y = dout; backwardDx: w = weight, y = dout.
  entries: {
    forward: [
      ['x', 'array<f32>'],
      ['w', 'array<f32>'],
      ['rstd', 'array<f32>'],
      ['y', 'array<f32>'],
    ],
    backwardDweight: [
      ['x', 'array<f32>'],
      ['w', 'array<f32>'],
      ['rstd', 'array<f32>'],
      ['y', 'array<f32>'],
    ],
    backwardDx: [
      ['x', 'array<f32>'],
      ['w', 'array<f32>'],
      ['rstd', 'array<f32>'],
      ['y', 'array<f32>'],
      ['dx', 'array<f32>'],
    ],
  },
});

/** Every entry point; the row kernels at both lane counts rmsnormLanes picks (hardware 32, software 4). */
export const RMSNORM_VARIANTS: readonly KernelVariant[] = [
  { kernel: RMSNORM_KERNEL, entryPoint: 'backwardDweight' },
  ...[32, 4].flatMap((L) => [
    { kernel: RMSNORM_KERNEL, entryPoint: 'forward', constants: { L } },
    { kernel: RMSNORM_KERNEL, entryPoint: 'backwardDx', constants: { L } },
  ]),
];

/**
 * Lanes per row of the row kernels (a power of two ≤ 256; a workgroup holds 256 / lanes rows).
 * 32 on hardware: a coalesced 128-byte row segment per warp. 4 on software adapters: SwiftShader's
 * cost grows with lanes × barrier steps (a 512 × 64 forward: ~25 ms at 4 lanes, ~160 ms at 32).
 */
export function rmsnormLanes(gpu: GpuContext): number {
  return rowLanes(gpu, 32, 4);
}

export interface RmsnormForwardArgs {
  /** [rows, C] */
  x: BufferSlice;
  /** [C] */
  weight: BufferSlice;
  /** [rows, C]; must not overlap x (WebGPU forbids aliased writable bindings). */
  out: BufferSlice;
  /** [rows], written (saved for the backward). */
  rstd: BufferSlice;
  rows: number;
  C: number;
  eps: number;
  /** Tuning only (results agree to rounding): lanes per row; default rmsnormLanes(gpu). */
  lanes?: number;
}

export interface RmsnormBackwardArgs {
  dout: BufferSlice;
  x: BufferSlice;
  weight: BufferSlice;
  rstd: BufferSlice;
  /** [rows, C]: overwritten, or accumulated when accumulateDx. */
  dx: BufferSlice;
  /** [C], accumulated (+=). */
  dweight: BufferSlice;
  rows: number;
  C: number;
  /** dx += instead of dx = (the residual stream sums branches). */
  accumulateDx: boolean;
  /** Tuning only (results agree to rounding): lanes per row of the dx kernel; default rmsnormLanes(gpu). */
  lanes?: number;
}

/** out = x · rstd · weight per row (256 / lanes rows per workgroup). */
export async function rmsnormForwardDispatch(gpu: GpuContext, a: RmsnormForwardArgs): Promise<Dispatch> {
  const label = 'rmsnorm.forward';
  checkDims(label, { rows: a.rows, C: a.C });
  if (!(Number.isFinite(a.eps) && a.eps >= 0)) argumentError(label, 'eps', `eps must be a finite number ≥ 0 (got ${a.eps})`);
  const n = a.rows * a.C;
  checkSlices(label, { x: [a.x, n], weight: [a.weight, a.C], rstd: [a.rstd, a.rows], out: [a.out, n] });
  const L = lanes(label, gpu, a.lanes);
  return kernelDispatch(
    gpu,
    RMSNORM_KERNEL,
    'forward',
    {
      uniforms: { P: { rows: a.rows, C: a.C, eps: a.eps, accumulate: 0 } },
      storage: { x: a.x, w: a.weight, rstd: a.rstd, y: a.out },
      constants: { L },
      label,
    },
    grid1d(ceilDiv(a.rows, 256 / L)),
  );
}

/**
 * [dweight += …, dx (+)= …]: a column-tiled, fixed-order pass over rows for dweight; dx like the
 * forward (256 / lanes rows per workgroup).
 */
export async function rmsnormBackwardDispatches(gpu: GpuContext, a: RmsnormBackwardArgs): Promise<Dispatch[]> {
  const label = 'rmsnorm.backward';
  checkDims(label, { rows: a.rows, C: a.C });
  const n = a.rows * a.C;
  checkSlices(label, {
    x: [a.x, n],
    weight: [a.weight, a.C],
    rstd: [a.rstd, a.rows],
    dout: [a.dout, n],
    dx: [a.dx, n],
    dweight: [a.dweight, a.C],
  });
  const L = lanes(label, gpu, a.lanes);
  return Promise.all([
    kernelDispatch(
      gpu,
      RMSNORM_KERNEL,
      'backwardDweight',
      {
        uniforms: { P: { rows: a.rows, C: a.C, eps: 0, accumulate: 0 } },
        storage: { x: a.x, w: a.dweight, rstd: a.rstd, y: a.dout },
        label: `${label}.dweight`,
      },
      [ceilDiv(a.C, TC)],
    ),
    kernelDispatch(
      gpu,
      RMSNORM_KERNEL,
      'backwardDx',
      {
        uniforms: { P: { rows: a.rows, C: a.C, eps: 0, accumulate: a.accumulateDx ? 1 : 0 } },
        storage: { x: a.x, w: a.weight, rstd: a.rstd, y: a.dout, dx: a.dx },
        constants: { L },
        label: `${label}.dx`,
      },
      grid1d(ceilDiv(a.rows, 256 / L)),
    ),
  ]);
}

function lanes(label: string, gpu: GpuContext, given: number | undefined): number {
  const L = given ?? rmsnormLanes(gpu);
  if (!(Number.isInteger(L) && L >= 1 && L <= 256 && (L & (L - 1)) === 0))
    argumentError(label, 'lanes', `lanes must be a power of two in [1, 256] (got ${L})`);
  return L;
}
