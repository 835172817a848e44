// Wrapper for shaders/rmsnorm.wgsl.
import code from '../../shaders/rmsnorm.wgsl?raw';
import { checkDims, checkSlices } from '../gpu/checks';
import { rowLanes } from '../gpu/lanes';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32 } from '../gpu/uniforms';

const TC = 8; // dweight columns per workgroup (shaders/rmsnorm.wgsl)

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
  if (!(Number.isFinite(a.eps) && a.eps >= 0)) throw new Error(`${label}: eps must be a finite number ≥ 0 (got ${a.eps})`);
  const n = a.rows * a.C;
  checkSlices(label, { x: [a.x, n], weight: [a.weight, a.C], rstd: [a.rstd, a.rows], out: [a.out, n] });
  const L = lanes(label, gpu, a.lanes);
  return gpu.dispatch(
    { code, entryPoint: 'forward', constants: { L }, label },
    [gpu.uniform([a.rows, a.C, f32(a.eps), 0]), a.x, a.weight, a.rstd, a.out],
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
    gpu.dispatch(
      { code, entryPoint: 'backwardDweight', label: `${label}.dweight` },
      [gpu.uniform([a.rows, a.C, f32(0), 0]), a.x, a.dweight, a.rstd, a.dout],
      [ceilDiv(a.C, TC)],
    ),
    gpu.dispatch(
      { code, entryPoint: 'backwardDx', constants: { L }, label: `${label}.dx` },
      [gpu.uniform([a.rows, a.C, f32(0), a.accumulateDx ? 1 : 0]), a.x, a.weight, a.rstd, a.dout, a.dx],
      grid1d(ceilDiv(a.rows, 256 / L)),
    ),
  ]);
}

function lanes(label: string, gpu: GpuContext, given: number | undefined): number {
  const L = given ?? rmsnormLanes(gpu);
  if (!(Number.isInteger(L) && L >= 1 && L <= 256 && (L & (L - 1)) === 0))
    throw new Error(`${label}: lanes must be a power of two in [1, 256] (got ${L})`);
  return L;
}


