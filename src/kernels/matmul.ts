// Wrapper for shaders/matmul.wgsl: C[M,N] (+)= op(A) · op(B).
import code from '../../shaders/matmul.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

export interface MatmulArgs {
  a: BufferSlice;
  b: BufferSlice;
  c: BufferSlice;
  M: number;
  N: number;
  K: number;
  /** false: a stored [M,K]; true: a stored [K,M]. */
  transA?: boolean;
  /** false: b stored [K,N]; true: b stored [N,K]. */
  transB?: boolean;
  /** true: c += op(a)·op(b); false: c = op(a)·op(b). */
  accumulate?: boolean;
  label?: string;
}

/**
 * Workgroup shape: WGX·WGY invocations, each computing R×R blocks of 4×4 outputs (R = 2 or 4), so a
 * tile of C is 4·R·WGY × 4·R·WGX; K advances TK (a multiple of 4) per staging step. `vec4Loads`:
 * load rows of A and B whose length is a multiple of 4 as vec4s.
 */
export interface MatmulTiling {
  WGX: number;
  WGY: number;
  R: 2 | 4;
  TK: number;
  vec4Loads: boolean;
}

/** GPUs: 16×16 invocations of 8×8 outputs (128×128 tiles, K step 8), 10 KiB of workgroup memory. */
export const TILING_GPU_LARGE: MatmulTiling = { WGX: 16, WGY: 16, R: 2, TK: 8, vec4Loads: true };
/** GPUs, outputs too small to fill a large device with 128×128 tiles: 64×64 tiles, 9 KiB. */
export const TILING_GPU_SMALL: MatmulTiling = { WGX: 8, WGY: 8, R: 2, TK: 16, vec4Loads: true };
/**
 * CPU emulation (SwiftShader). Every load from memory is an emulated per-lane gather costing as much
 * as dozens of FMAs, a vec4 load is four of them, and both sides of every branch run. So: 16×16
 * outputs per invocation (8 block loads per 16 block products), scalar loads only, 64×64 tiles of
 * 4×4 invocations, 9 KiB. Measured on SwiftShader at 512³: about 2× the throughput of 8×8 outputs
 * per invocation, but about 4 s of CPU to compile (vs 1.5 s).
 */
export const TILING_CPU: MatmulTiling = { WGX: 4, WGY: 4, R: 4, TK: 16, vec4Loads: false };
/** CPU emulation, small products: 8×8 outputs per invocation, 32×32 tiles; quick to compile. */
export const TILING_CPU_SMALL: MatmulTiling = { WGX: 4, WGY: 4, R: 2, TK: 16, vec4Loads: false };

/**
 * The tiling matmulDispatch uses by default for this device and shape. On CPU emulation the big
 * tiling pays for its compile time only on big products (from 256³ multiply-adds, tens of ms each),
 * so unit tests with tiny shapes compile only the small one.
 */
export function defaultTiling(gpu: GpuContext, M: number, N: number, K: number): MatmulTiling {
  if (gpu.adapter.software) return M * N * K >= 1 << 24 ? TILING_CPU : TILING_CPU_SMALL;
  // Below ~128 tiles of 128×128 a large GPU would idle: use 4× as many smaller tiles.
  return ceilDiv(M, 128) * ceilDiv(N, 128) >= 128 ? TILING_GPU_LARGE : TILING_GPU_SMALL;
}

/** Workgroup memory of a tiling: As (BM rows of TK floats + 4 padding) and Bs (TK rows of BN floats). */
export function workgroupBytes(t: MatmulTiling): number {
  const BM = 4 * t.R * t.WGY;
  const BN = 4 * t.R * t.WGX;
  return 4 * (BM * (t.TK + 4) + t.TK * BN);
}

export const MATMUL_KERNEL = defineKernel({
  name: 'matmul',
  files: [['matmul.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['M', 'u32'],
        ['N', 'u32'],
        ['K', 'u32'],
        ['tilesN', 'u32', 'tiles along N'],
        ['tiles', 'u32', 'tiles along M × tiles along N'],
        ['flags', 'u32', 'FLAG_* bits'],
      ],
    },
  },
  entries: {
    matmul: [
      ['A', 'array<vec4<f32>>'],
      ['B', 'array<vec4<f32>>'],
      ['C', 'array<f32>'],
    ],
  },
});

const tilingConstants = (t: MatmulTiling) => ({ WGX: t.WGX, WGY: t.WGY, R: t.R, TK: t.TK, VEC4_LOADS: t.vec4Loads ? 1 : 0 });

/** The pipelines matmulDispatch builds: one per tiling. */
export const MATMUL_VARIANTS: readonly KernelVariant[] = [TILING_GPU_LARGE, TILING_GPU_SMALL, TILING_CPU, TILING_CPU_SMALL].map((t) => ({
  kernel: MATMUL_KERNEL,
  entryPoint: 'matmul',
  constants: tilingConstants(t),
}));

// Params.flags bits (shaders/matmul.wgsl).
const FLAG_TRANS_A = 1;
const FLAG_TRANS_B = 2;
const FLAG_VEC_A = 4;
const FLAG_VEC_B = 8;
const FLAG_ACCUMULATE = 16;

const roundUp16 = (x: number) => Math.ceil(x / 16) * 16;

/**
 * A and B are read as vec4 arrays: bind `floats` floats rounded up to whole vec4s (the offset is
 * checked 16-byte aligned by checkSlices). Arena slices start 256-aligned in 16-byte-rounded
 * buffers, so rounding up stays in the buffer and never reaches the next slice. The shader only
 * uses floats inside the matrix.
 */
function vec4Binding(label: string, name: string, s: BufferSlice, floats: number): BufferSlice {
  const size = roundUp16(floats * 4);
  if (s.offset + size > s.buffer.size)
    argumentError(label, name, `${name} needs ${size} bytes at offset ${s.offset}; its buffer has ${s.buffer.size}`);
  return { buffer: s.buffer, offset: s.offset, size };
}

export interface MatmulOptions {
  /** Defaults to defaultTiling(gpu, M, N, K). */
  tiling?: MatmulTiling;
  /** Fold the grid into 2-D beyond this many workgroups (default 65,535, the portable limit). */
  maxWorkgroupsPerDim?: number;
}

/**
 * Builds the dispatch for C[M,N] (+)= op(A)·op(B), for any M, N, K ≥ 1. `c` must not overlap `a`
 * or `b`. One pipeline per tiling serves every shape, transpose and accumulate flag (they are
 * uniforms), so a model's matmuls compile once. Invalid arguments reject the promise.
 */
export async function matmulDispatch(gpu: GpuContext, args: MatmulArgs, opts: MatmulOptions = {}): Promise<Dispatch> {
  const { a, b, c, M, N, K } = args;
  const transA = args.transA ?? false;
  const transB = args.transB ?? false;
  const label = args.label ?? 'matmul';
  checkDims(label, { M, N, K });
  const t = opts.tiling ?? defaultTiling(gpu, M, N, K);
  const { WGX, WGY, R, TK } = t;
  if (WGX * WGY > gpu.limits.maxComputeInvocationsPerWorkgroup || TK < 4 || TK % 4 !== 0 || (R !== 2 && R !== 4))
    argumentError(label, 'tiling', `bad tiling ${JSON.stringify(t)}`);
  if (workgroupBytes(t) > Math.min(16384, gpu.limits.maxComputeWorkgroupStorageSize))
    argumentError(label, 'tiling', `tiling ${JSON.stringify(t)} needs ${workgroupBytes(t)} bytes of workgroup memory`);
  // Sizes and alignment of the slices given; overlaps of the ranges bound (a and b rounded up to
  // whole vec4s, c whole).
  const all = [
    ['a', 'b'],
    ['a', 'c'],
    ['b', 'c'],
  ] as const;
  checkSlices(label, { a: [a, M * K], b: [b, K * N], c: [c, M * N] }, { vec4: ['a', 'b'], mayOverlap: all });
  const A = vec4Binding(label, 'a', a, M * K);
  const B = vec4Binding(label, 'b', b, K * N);
  checkSlices(label, { a: [A, 0], b: [B, 0], c: [c, 0] });
  const tilesN = ceilDiv(N, 4 * R * WGX);
  const tiles = ceilDiv(M, 4 * R * WGY) * tilesN;
  const flags =
    (transA ? FLAG_TRANS_A : 0) |
    (transB ? FLAG_TRANS_B : 0) |
    ((transA ? M : K) % 4 === 0 ? FLAG_VEC_A : 0) |
    ((transB ? K : N) % 4 === 0 ? FLAG_VEC_B : 0) |
    (args.accumulate ? FLAG_ACCUMULATE : 0);
  return kernelDispatch(
    gpu,
    MATMUL_KERNEL,
    'matmul',
    { uniforms: { P: { M, N, K, tilesN, tiles, flags } }, storage: { A, B, C: c }, constants: tilingConstants(t), label },
    grid1d(tiles, opts.maxWorkgroupsPerDim),
  );
}
