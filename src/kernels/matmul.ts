// Wrapper for shaders/matmul.wgsl: C[M,N] (+)= op(A) · op(B).
import code from '../../shaders/matmul.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';

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

/** Workgroup shape: WGX·WGY invocations, each computing a 4×4 block; TK is the K step per tile. */
export interface MatmulTiling {
  WGX: number;
  WGY: number;
  TK: number;
}

/** 16×16 invocations → 64×64 tiles of C, K in steps of 16: 256 invocations, 10 KiB of workgroup memory. */
export const MATMUL_TILING: MatmulTiling = { WGX: 16, WGY: 16, TK: 16 };

const roundUp16 = (x: number) => Math.ceil(x / 16) * 16;

/** A and B are read as vec4 arrays: bind `floats` floats rounded up to whole vec4s. */
function vec4Binding(name: string, s: BufferSlice, floats: number): BufferSlice {
  const size = roundUp16(floats * 4);
  if (s.offset % 16 !== 0) throw new Error(`matmul: ${name} offset ${s.offset} is not 16-byte aligned`);
  // Arena slices start 256-aligned in 16-byte-rounded buffers, so rounding up stays in the buffer
  // and never reaches the next slice. The padding floats are loaded but never used.
  if (s.offset + size > s.buffer.size)
    throw new Error(`matmul: ${name} needs ${size} bytes at offset ${s.offset}; its buffer has ${s.buffer.size}`);
  return { buffer: s.buffer, offset: s.offset, size };
}

function checkSize(name: string, s: BufferSlice, floats: number): void {
  if (s.size < floats * 4) throw new Error(`matmul: ${name} holds ${s.size} bytes, needs ${floats * 4}`);
}

const overlaps = (x: BufferSlice, xBytes: number, y: BufferSlice, yBytes: number) =>
  x.buffer === y.buffer && x.offset < y.offset + yBytes && y.offset < x.offset + xBytes;

/**
 * Builds the dispatch for C[M,N] (+)= op(A)·op(B). `c` must not overlap `a` or `b`.
 * Vec4 loads are used for each operand whose row length is a multiple of 4; any M, N, K ≥ 1 works.
 */
export function matmulDispatch(gpu: GpuContext, args: MatmulArgs, tiling: MatmulTiling = MATMUL_TILING): Promise<Dispatch> {
  const { a, b, c, M, N, K } = args;
  const transA = args.transA ?? false;
  const transB = args.transB ?? false;
  const label = args.label ?? 'matmul';
  for (const [k, v] of Object.entries({ M, N, K }))
    if (!Number.isInteger(v) || v < 1) throw new Error(`${label}: ${k} = ${v} must be an integer ≥ 1`);
  const { WGX, WGY, TK } = tiling;
  if (WGX * WGY > gpu.limits.maxComputeInvocationsPerWorkgroup || TK % 4 !== 0)
    throw new Error(`${label}: bad tiling ${JSON.stringify(tiling)}`);
  checkSize('a', a, M * K);
  checkSize('b', b, K * N);
  checkSize('c', c, M * N);
  if (overlaps(c, M * N * 4, a, M * K * 4) || overlaps(c, M * N * 4, b, K * N * 4))
    throw new Error(`${label}: c overlaps an input`);
  const tilesN = ceilDiv(N, 4 * WGX);
  const tiles = ceilDiv(M, 4 * WGY) * tilesN;
  const constants = {
    TRANS_A: transA ? 1 : 0,
    TRANS_B: transB ? 1 : 0,
    VEC_A: (transA ? M : K) % 4 === 0 ? 1 : 0,
    VEC_B: (transB ? K : N) % 4 === 0 ? 1 : 0,
    ACCUMULATE: args.accumulate ? 1 : 0,
    WGX,
    WGY,
    TK,
  };
  const bindings = [gpu.uniform([M, N, K, tilesN, tiles]), vec4Binding('a', a, M * K), vec4Binding('b', b, K * N), c];
  return gpu.dispatch({ code, entryPoint: 'matmul', constants, label }, bindings, grid1d(tiles));
}
