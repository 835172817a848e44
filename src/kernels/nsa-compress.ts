// Wrapper for shaders/nsa_compress.wgsl: NSA compression φ = avg and φ = mlp, batched.
// x [B,T,G,D] → out [B,Ncmp,G,D]. The MLP's dense layers go through matmul.ts.
import code from '../../shaders/nsa_compress.wgsl?raw';
import { numCmpBlocks } from '../definitions/nsa-blocks';
import { assertNsaConfig, type NsaConfig } from '../definitions/nsa-config';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices, type SliceArg } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant, type StorageArgs } from '../gpu/kernel-interface';
import { matmulDispatch } from './matmul';

const WG = 256; // elementwise entry points
const TC = 16; // colSum columns per workgroup

const F = 'array<f32>';
export const NSA_COMPRESS_KERNEL = defineKernel({
  name: 'nsa_compress',
  files: [['nsa_compress.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['B', 'u32'],
        ['T', 'u32'],
        ['G', 'u32'],
        ['D', 'u32'],
        ['N', 'u32', 'Ncmp(T)'],
        ['l', 'u32'],
        ['d', 'u32'],
        ['total', 'u32', 'elements of an elementwise launch'],
        ['rows', 'u32'],
        ['cols', 'u32'],
      ],
    },
  },
  // A name keeps one binding index in every entry point (kernelHeader): biasGelu and addBias list
  // the bias first.
  entries: {
    avgForward: [
      ['x', F],
      ['out', F],
    ],
    avgBackward: [
      ['dout', F],
      ['dx', F],
    ],
    gather: [
      ['x', F],
      ['pos', F],
      ['z', F],
    ],
    biasGelu: [
      ['bias', F],
      ['hPre', F],
      ['act', F],
    ],
    addBias: [
      ['bias', F],
      ['out', F],
    ],
    geluBackward: [
      ['dh', F],
      ['hPre', F],
    ],
    colSum: [
      ['dRows', F],
      ['dParam', F],
    ],
    gatherBackward: [
      ['dz', F],
      ['dx', F],
    ],
  },
});

export const NSA_COMPRESS_VARIANTS: readonly KernelVariant[] = Object.keys(NSA_COMPRESS_KERNEL.spec.entries).map((entryPoint) => ({
  kernel: NSA_COMPRESS_KERNEL,
  entryPoint,
}));

export interface CompressDims {
  B: number;
  T: number;
  G: number;
  /** Vector width (dk for keys, dv for values). */
  D: number;
  cfg: NsaConfig;
}

export interface CompressAvgForwardArgs extends CompressDims {
  /** [B,T,G,D]. */
  x: BufferSlice;
  /** [B,Ncmp,G,D], overwritten. */
  out: BufferSlice;
}

export interface CompressAvgBackwardArgs extends CompressDims {
  /** [B,Ncmp,G,D]. */
  dout: BufferSlice;
  /** [B,T,G,D], overwritten (0 where no block holds a position). */
  dx: BufferSlice;
}

/** Weights of one compression MLP (docs/nsa-spec.md φ = mlp; shapes as src/reference/nsa/compression.ts). */
export interface CmpMlpSlices {
  /** [l, D]. */
  pos: BufferSlice;
  /** [l·D, dHidden]. */
  w1: BufferSlice;
  /** [dHidden]. */
  b1: BufferSlice;
  /** [dHidden, D]. */
  w2: BufferSlice;
  /** [D]. */
  b2: BufferSlice;
}

export interface CompressMlpDims extends CompressDims {
  dHidden: number;
}

/**
 * Scratch of the MLP, by name. `hPre` (pre-activations, bias included) and `act` (gelu(hPre)) are
 * written by the forward and read by the backward: keep one pair per (layer, K/V). `z` (the
 * gathered block inputs, reused as dz) and `dh` are rewritten by each call and may be shared.
 */
export type CmpMlpScratch = Record<string, BufferSlice>;

export interface CompressMlpForwardArgs extends CompressMlpDims {
  x: BufferSlice;
  out: BufferSlice;
  weights: CmpMlpSlices;
  scratch: CmpMlpScratch;
}

export interface CompressMlpBackwardArgs extends CompressMlpDims {
  /** [B,Ncmp,G,D]. */
  dout: BufferSlice;
  /** The forward's input [B,T,G,D] (z is gathered again rather than kept). */
  x: BufferSlice;
  /** [B,T,G,D], overwritten. */
  dx: BufferSlice;
  weights: CmpMlpSlices;
  /** Accumulated (+=). */
  grads: CmpMlpSlices;
  scratch: CmpMlpScratch;
}

type Entries = typeof NSA_COMPRESS_KERNEL.spec.entries;
type Entry = keyof Entries;
/** The bindings of entry point E, by name. */
type Storage<E extends Entry> = StorageArgs<Entries[E]>;

interface Words {
  total?: number;
  rows?: number;
  cols?: number;
}

function checkCompressDims(label: string, a: CompressDims & { dHidden?: number }): void {
  assertNsaConfig(a.cfg, { T: a.T });
  const dims: Record<string, number> = { B: a.B, T: a.T, G: a.G, D: a.D };
  if (a.dHidden !== undefined) dims.dHidden = a.dHidden;
  checkDims(label, dims, { B: 0, T: 0 });
}

function dispatch<E extends Entry>(
  gpu: GpuContext,
  entry: E,
  a: CompressDims,
  w: Words,
  storage: Storage<E>,
  workgroups: readonly [number, number?],
): Promise<Dispatch> {
  const N = numCmpBlocks(a.T, a.cfg);
  const P = { B: a.B, T: a.T, G: a.G, D: a.D, N, l: a.cfg.l, d: a.cfg.d, total: w.total ?? 0, rows: w.rows ?? 0, cols: w.cols ?? 0 };
  return kernelDispatch(gpu, NSA_COMPRESS_KERNEL, entry, { uniforms: { P }, storage, label: `nsa_compress.${entry}` }, workgroups);
}

const elementwise = <E extends Entry>(gpu: GpuContext, entry: E, a: CompressDims, total: number, storage: Storage<E>, cols = 0) =>
  dispatch(gpu, entry, a, { total, cols }, storage, grid1d(ceilDiv(total, WG)));

/** dParam[c] += Σ_r dRows[r·cols + c] (a bias or position gradient from a gradient matrix [rows, cols]). */
const colSum = (gpu: GpuContext, a: CompressDims, dRows: BufferSlice, dParam: BufferSlice, rows: number, cols: number) =>
  dispatch(gpu, 'colSum', a, { rows, cols }, { dRows, dParam }, [ceilDiv(cols, TC)]);

/** φ = avg: out[b,k,g] = mean_{i<l} x[b, k·d+i, g]. Zero workgroups (a no-op) when Ncmp = 0. */
export async function compressAvgForwardDispatch(gpu: GpuContext, a: CompressAvgForwardArgs): Promise<Dispatch> {
  const label = 'nsa_compress.avgForward';
  checkCompressDims(label, a);
  const N = numCmpBlocks(a.T, a.cfg);
  checkSlices(label, { x: [a.x, a.B * a.T * a.G * a.D], out: [a.out, a.B * N * a.G * a.D] });
  return elementwise(gpu, 'avgForward', a, a.B * N * a.G * a.D, { x: a.x, out: a.out });
}

/** φ = avg backward: dx[b,s,g] = Σ_{blocks k ∋ s} dout[b,k,g]/l, k ascending; overwrites dx. */
export async function compressAvgBackwardDispatch(gpu: GpuContext, a: CompressAvgBackwardArgs): Promise<Dispatch> {
  const label = 'nsa_compress.avgBackward';
  checkCompressDims(label, a);
  const N = numCmpBlocks(a.T, a.cfg);
  checkSlices(label, { dout: [a.dout, a.B * N * a.G * a.D], dx: [a.dx, a.B * a.T * a.G * a.D] });
  return elementwise(gpu, 'avgBackward', a, a.B * a.T * a.G * a.D, { dout: a.dout, dx: a.dx });
}

/** f32 elements of each MLP scratch slice (0 when Ncmp = 0; the arena still gives 4 bytes). */
export function compressMlpScratchLengths(a: CompressMlpDims): Record<string, number> {
  const R = a.B * numCmpBlocks(a.T, a.cfg) * a.G;
  return { z: R * a.cfg.l * a.D, hPre: R * a.dHidden, act: R * a.dHidden, dh: R * a.dHidden };
}

/** The MLP weights (or their gradients, names prefixed `d`) and the named scratch slices, with their lengths. */
function mlpSlices(
  a: CompressMlpDims,
  weights: CmpMlpSlices,
  prefix: '' | 'd',
  scratch?: CmpMlpScratch,
  names: string[] = [],
): Record<string, SliceArg> {
  const { l } = a.cfg;
  const Dh = a.dHidden;
  const out: Record<string, SliceArg> = {
    [`${prefix}pos`]: [weights.pos, l * a.D],
    [`${prefix}w1`]: [weights.w1, l * a.D * Dh],
    [`${prefix}b1`]: [weights.b1, Dh],
    [`${prefix}w2`]: [weights.w2, Dh * a.D],
    [`${prefix}b2`]: [weights.b2, a.D],
  };
  const lengths = compressMlpScratchLengths(a);
  for (const n of names) out[`scratch.${n}`] = [scratch?.[n], lengths[n]];
  return out;
}

/**
 * φ = mlp forward: gather z, hPre = z·W1 (matmul), hPre += b1 and act = gelu(hPre), out = act·W2
 * (matmul), out += b2. Empty when Ncmp = 0 (no rows: nothing to write).
 */
export async function compressMlpForwardDispatches(gpu: GpuContext, a: CompressMlpForwardArgs): Promise<Dispatch[]> {
  const label = 'nsa_compress.mlpForward';
  checkCompressDims(label, a);
  const N = numCmpBlocks(a.T, a.cfg);
  const R = a.B * N * a.G;
  checkSlices(label, {
    ...mlpSlices(a, a.weights, '', a.scratch, ['z', 'hPre', 'act']),
    x: [a.x, a.B * a.T * a.G * a.D],
    out: [a.out, R * a.D],
  });
  if (R === 0) return [];
  const lD = a.cfg.l * a.D;
  const Dh = a.dHidden;
  const { z, hPre, act } = a.scratch;
  const w = a.weights;
  return Promise.all([
    elementwise(gpu, 'gather', a, R * lD, { x: a.x, pos: w.pos, z }),
    matmulDispatch(gpu, { a: z, b: w.w1, c: hPre, M: R, N: Dh, K: lD, label: `${label}.w1` }),
    elementwise(gpu, 'biasGelu', a, R * Dh, { bias: w.b1, hPre, act }, Dh),
    matmulDispatch(gpu, { a: act, b: w.w2, c: a.out, M: R, N: a.D, K: Dh, label: `${label}.w2` }),
    elementwise(gpu, 'addBias', a, R * a.D, { bias: w.b2, out: a.out }, a.D),
  ]);
}

/**
 * φ = mlp backward, given the forward's hPre and act in scratch. Parameter gradients accumulate
 * (+=) through fixed-order matmuls and column sums; dx is overwritten. Order:
 * z = gather(x), db2 += Σ dout, dW2 += actᵀ·dout, dh = dout·W2ᵀ, dh *= gelu'(hPre), db1 += Σ dh,
 * dW1 += zᵀ·dh, dz = dh·W1ᵀ (into z), dpos += Σ dz, dx = gather of dz.
 */
export async function compressMlpBackwardDispatches(gpu: GpuContext, a: CompressMlpBackwardArgs): Promise<Dispatch[]> {
  const label = 'nsa_compress.mlpBackward';
  checkCompressDims(label, a);
  const N = numCmpBlocks(a.T, a.cfg);
  const R = a.B * N * a.G;
  const nx = a.B * a.T * a.G * a.D;
  checkSlices(label, {
    ...mlpSlices(a, a.weights, '', a.scratch, ['z', 'hPre', 'act', 'dh']),
    ...mlpSlices(a, a.grads, 'd'),
    x: [a.x, nx],
    dx: [a.dx, nx],
    dout: [a.dout, R * a.D],
  });
  const dx = elementwise(gpu, 'gatherBackward', a, nx, { dz: a.scratch.z, dx: a.dx });
  if (R === 0) return Promise.all([dx]); // no blocks: dx = 0, parameter gradients unchanged
  const lD = a.cfg.l * a.D;
  const Dh = a.dHidden;
  const { z, hPre, act, dh } = a.scratch;
  const w = a.weights;
  const g = a.grads;
  return Promise.all([
    elementwise(gpu, 'gather', a, R * lD, { x: a.x, pos: w.pos, z }),
    colSum(gpu, a, a.dout, g.b2, R, a.D),
    matmulDispatch(gpu, { a: act, b: a.dout, c: g.w2, M: Dh, N: a.D, K: R, transA: true, accumulate: true, label: `${label}.dw2` }),
    matmulDispatch(gpu, { a: a.dout, b: w.w2, c: dh, M: R, N: Dh, K: a.D, transB: true, label: `${label}.dh` }),
    elementwise(gpu, 'geluBackward', a, R * Dh, { dh, hPre }),
    colSum(gpu, a, dh, g.b1, R, Dh),
    matmulDispatch(gpu, { a: z, b: dh, c: g.w1, M: lD, N: Dh, K: R, transA: true, accumulate: true, label: `${label}.dw1` }),
    matmulDispatch(gpu, { a: dh, b: w.w1, c: z, M: R, N: lD, K: Dh, transB: true, label: `${label}.dz` }),
    colSum(gpu, a, z, g.pos, R, lD),
    dx,
  ]);
}
