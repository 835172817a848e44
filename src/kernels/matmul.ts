// Wrapper for shaders/matmul.wgsl: C[M,N] (+)= op(A) · op(B), in one dispatch, or split over K
// (matmulSplitPlan) into a partial-sum pass and a fixed-order sum (matmulDispatches).
import code from '../../shaders/matmul.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import { FILL_FACTOR, fillTarget } from '../gpu/compute-units';
import type { AdapterSummary, Dispatch, GpuContext } from '../gpu/context';
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
  // Fewer 128×128 tiles than the GPU needs to fill (4 per SM): 4× as many 64×64 ones.
  return ceilDiv(M, 128) * ceilDiv(N, 128) >= fillTarget(gpu.adapter) ? TILING_GPU_LARGE : TILING_GPU_SMALL;
}

/** Output tiles of C under a tiling. */
export function matmulTiles(t: MatmulTiling, M: number, N: number): number {
  return ceilDiv(M, 4 * t.R * t.WGY) * ceilDiv(N, 4 * t.R * t.WGX);
}

/** How a product is cut over K: `splits` chunks of `kChunk` (the last one shorter). */
export interface MatmulSplit {
  splits: number;
  kChunk: number;
}

/** K cut into chunks of ceil(K / n) (at most n chunks; the last shorter). */
function splitAtMost(K: number, n: number): MatmulSplit {
  const kChunk = ceilDiv(K, n);
  return { splits: ceilDiv(K, kChunk), kChunk };
}

/** K cut into the fewest equal chunks (the last shorter) that are at least n (n ≤ K). */
function splitAtLeast(K: number, n: number): MatmulSplit {
  for (let m = n; ; m++) {
    const s = splitAtMost(K, m);
    if (s.splits >= n) return s;
  }
}

/**
 * FLOPs per byte of memory traffic at which an H100-class GPU is balanced (67 TFLOP/s fp32 over
 * 3.35 TB/s): matmulSplitPlan's cost model weighs the partial sums' traffic against the fill with it.
 */
export const SPLIT_BALANCE = 20;

/** A split may cost at most this much more than none in matmulSplitPlan's model to fill the GPU. */
export const SPLIT_SLACK = 1.1;

/** Invocations per workgroup of splitSum (shaders/matmul.wgsl's SUM_WG). */
const SUM_WG = 64;

/**
 * The modelled time, in FLOP-equivalents, of C[M,N] (+)= op(A)·op(B) in `splits` chunks on a GPU of
 * `units` SMs: the roofline of each pass (FLOPs, or bytes × SPLIT_BALANCE) divided by the share of
 * SMs its workgroups occupy, as npm run gpu:plan's fill-limited time does. The split's passes move
 * splits·M·N partial sums out and back in.
 */
function splitCost(tiles: number, M: number, N: number, K: number, splits: number, accumulate: boolean, units: number): number {
  const MN = M * N;
  const fill = (wg: number) => Math.min(1, wg / units);
  const out = splits > 1 ? splits : accumulate ? 2 : 1;
  const part = Math.max(2 * MN * K, SPLIT_BALANCE * 4 * (M * K + K * N + out * MN)) / fill(tiles * splits);
  if (splits === 1) return part;
  return part + (SPLIT_BALANCE * 4 * (splits + (accumulate ? 2 : 1)) * MN) / fill(ceilDiv(MN, SUM_WG));
}

/**
 * The split over K for C[M,N] (+)= op(A)[M,K]·op(B)[K,N] on a GPU that needs `target` workgroups
 * to fill (fillTarget: FILL_FACTOR per SM; 0 on software adapters, which are never split: there
 * the partial sums' traffic is pure cost). One chunk when the output's tiles alone reach the
 * target. Else the fewest equal chunks that bring tiles × chunks to the target (so the partial
 * sums, splits·M·N floats, are as few as the fill allows), each at least one K step (TK) long and
 * all within `maxParts` floats, if that costs at most SPLIT_SLACK × the unsplit product in
 * splitCost's model: long K over a small output (weight gradients with K = B·T, the LM head's input
 * gradient with K = vocabulary, narrow projections) splits; a short K over a wide output, where the
 * partial sums would cost more than the idle SMs, stays whole.
 */
export function matmulSplitPlan(
  t: MatmulTiling,
  M: number,
  N: number,
  K: number,
  target: number,
  maxParts: number,
  accumulate = false,
): MatmulSplit {
  const tiles = matmulTiles(t, M, N);
  const whole: MatmulSplit = { splits: 1, kChunk: K };
  if (target <= 0 || tiles >= target) return whole;
  const want = ceilDiv(target, tiles);
  // Chunks of at least TK whose partial sums fit maxParts.
  const most = Math.min(Math.floor(K / t.TK), Math.floor(maxParts / (M * N)));
  if (most < 2) return whole;
  let split = want <= most ? splitAtLeast(K, want) : splitAtMost(K, most);
  if (split.splits > most) split = splitAtMost(K, most);
  if (split.splits < 2) return whole;
  const units = target / FILL_FACTOR;
  const slower = splitCost(tiles, M, N, K, split.splits, accumulate, units) > SPLIT_SLACK * splitCost(tiles, M, N, K, 1, accumulate, units);
  return slower ? whole : split;
}

/**
 * Floats of the partial-sum scratch that covers every split matmulSplitPlan makes on this adapter
 * with maxParts = this: 2 × the fill target × a 64×64 tile (a split is only made below the target,
 * and its tiles × chunks stay under about twice it). 0 on software adapters.
 */
export function matmulPartsFloats(adapter: AdapterSummary): number {
  const tile = 4 * TILING_GPU_SMALL.R * TILING_GPU_SMALL.WGY * 4 * TILING_GPU_SMALL.R * TILING_GPU_SMALL.WGX;
  return 2 * fillTarget(adapter) * tile;
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
        ['kChunk', 'u32', 'K per chunk (K: one chunk)'],
        ['splits', 'u32', 'chunks of K: matmul writes chunk s of C at s·M·N; splitSum adds them'],
      ],
    },
  },
  entries: {
    matmul: [
      ['A', 'array<vec4<f32>>'],
      ['B', 'array<vec4<f32>>'],
      ['C', 'array<f32>'],
    ],
    splitSum: [
      ['Parts', 'array<f32>'],
      ['Out', 'array<f32>'],
    ],
  },
});

const tilingConstants = (t: MatmulTiling) => ({ WGX: t.WGX, WGY: t.WGY, R: t.R, TK: t.TK, VEC4_LOADS: t.vec4Loads ? 1 : 0 });

/** The pipelines matmulDispatch builds: one per tiling; and the split's sum. */
export const MATMUL_VARIANTS: readonly KernelVariant[] = [
  ...[TILING_GPU_LARGE, TILING_GPU_SMALL, TILING_CPU, TILING_CPU_SMALL].map((t) => ({
    kernel: MATMUL_KERNEL,
    entryPoint: 'matmul',
    constants: tilingConstants(t),
  })),
  { kernel: MATMUL_KERNEL, entryPoint: 'splitSum' },
];

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

export interface MatmulSplitOptions extends MatmulOptions {
  /**
   * Scratch for the partial sums of a split ([splits, M, N] floats; matmulPartsFloats covers every
   * default split). Without it nothing is split.
   */
  parts?: BufferSlice;
  /** Chunks of K (≥ 1). Default: matmulSplitPlan for this adapter within `parts`. */
  splits?: number;
}

/** Checks the arguments and the tiling; the uniform words' shape fields and the vec4 bindings of A and B. */
function prepare(gpu: GpuContext, args: MatmulArgs, opts: MatmulOptions) {
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
  return { label, t, A, B, P: { M, N, K, tilesN, tiles, flags } };
}

/**
 * Builds the dispatch for C[M,N] (+)= op(A)·op(B), for any M, N, K ≥ 1, in one pass over K. `c`
 * must not overlap `a` or `b`. One pipeline per tiling serves every shape, transpose and accumulate
 * flag (they are uniforms), so a model's matmuls compile once. Invalid arguments reject the promise.
 */
export async function matmulDispatch(gpu: GpuContext, args: MatmulArgs, opts: MatmulOptions = {}): Promise<Dispatch> {
  const { label, t, A, B, P } = prepare(gpu, args, opts);
  return kernelDispatch(
    gpu,
    MATMUL_KERNEL,
    'matmul',
    { uniforms: { P: { ...P, kChunk: P.K, splits: 1 } }, storage: { A, B, C: args.c }, constants: tilingConstants(t), label },
    grid1d(P.tiles, opts.maxWorkgroupsPerDim),
  );
}

/**
 * C[M,N] (+)= op(A)·op(B) split over K where the output alone would leave the GPU idle (few tiles,
 * long K: weight gradients with K = B·T, the LM head's input gradient with K = vocabulary): pass 1
 * (`label`) runs one workgroup per (tile, chunk of K) and writes each chunk's product to
 * parts[chunk] ([splits, M, N], plain stores); pass 2 (`label.sum`) adds the chunks in ascending
 * order per output, then writes or adds to C. No atomics: a fixed split gives the same bits every
 * run (a different split rounds differently). One chunk: the single dispatch of matmulDispatch.
 */
export async function matmulDispatches(gpu: GpuContext, args: MatmulArgs, opts: MatmulSplitOptions = {}): Promise<Dispatch[]> {
  const { label, t, A, B, P } = prepare(gpu, args, opts);
  const parts = opts.parts;
  const maxParts = parts ? Math.floor(parts.size / 4) : 0;
  let split: MatmulSplit;
  if (opts.splits === undefined) split = matmulSplitPlan(t, P.M, P.N, P.K, fillTarget(gpu.adapter), maxParts, args.accumulate ?? false);
  else {
    checkDims(label, { splits: opts.splits });
    if (opts.splits > P.K) argumentError(label, 'splits', `splits = ${opts.splits} exceeds K = ${P.K}`);
    split = splitAtMost(P.K, opts.splits);
  }
  if (split.splits === 1) return [await matmulDispatch(gpu, args, opts)];
  const total = P.M * P.N;
  if (!parts) return argumentError(label, 'parts', `a split over K needs a parts scratch of ${split.splits * total} floats`);
  checkSlices(label, { a: [A, 0], b: [B, 0], c: [args.c, total], parts: [parts, split.splits * total] });
  const uniforms = { P: { ...P, ...split } };
  return Promise.all([
    kernelDispatch(
      gpu,
      MATMUL_KERNEL,
      'matmul',
      {
        uniforms: { P: { ...uniforms.P, flags: P.flags & ~FLAG_ACCUMULATE } },
        storage: { A, B, C: parts },
        constants: tilingConstants(t),
        label,
      },
      grid1d(P.tiles * split.splits, opts.maxWorkgroupsPerDim),
    ),
    kernelDispatch(
      gpu,
      MATMUL_KERNEL,
      'splitSum',
      { uniforms, storage: { Parts: parts, Out: args.c }, label: `${label}.sum` },
      grid1d(ceilDiv(total, SUM_WG), opts.maxWorkgroupsPerDim),
    ),
  ]);
}
