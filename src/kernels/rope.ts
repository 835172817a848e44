// Wrapper for shaders/rope.wgsl, and the cos/sin table it reads.
import code from '../../shaders/rope.wgsl?raw';
import { type BufferSlice, createLayoutArena } from '../gpu/arena';
import { argumentError, checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;

export const ROPE_KERNEL = defineKernel({
  name: 'rope',
  files: [['rope.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['pairs', 'u32', 'rows · heads · half: the number of pairs'],
        ['T', 'u32'],
        ['heads', 'u32'],
        ['half', 'u32'],
        ['inverse', 'u32'],
      ],
    },
  },
  entries: {
    apply: [
      ['table', 'array<vec2<f32>>'],
      ['x', 'array<f32>'],
      ['out', 'array<f32>'],
    ],
    applyInPlace: [
      ['table', 'array<vec2<f32>>'],
      ['x', 'array<f32>'],
    ],
  },
});

export const ROPE_VARIANTS: readonly KernelVariant[] = [
  { kernel: ROPE_KERNEL, entryPoint: 'apply', constants: { WG } },
  { kernel: ROPE_KERNEL, entryPoint: 'applyInPlace', constants: { WG } },
];

export interface RopeArgs {
  /** [rows, heads, headDim] */
  x: BufferSlice;
  /** [rows, heads, headDim]; may be the same slice as x (in place), must not partly overlap it. */
  out: BufferSlice;
  rows: number;
  /** Sequence length: row r sits at position r % T. */
  T: number;
  heads: number;
  /** Even. */
  headDim: number;
  theta: number;
  /** Rotate by −angle: the backward (the rotation's transpose). */
  inverse: boolean;
}

// One table per (device, T, headDim, theta), created on first use (at plan build, never per step).
const tables = new WeakMap<GpuContext, Map<string, BufferSlice>>();

/** cos/sin of pos · theta^(−2j/headDim) for pos < T, j < headDim/2, computed in float64: [T, half] × (cos, sin). */
export function ropeTable(T: number, headDim: number, theta: number): Float32Array {
  const half = headDim / 2;
  const t = new Float32Array(T * half * 2);
  for (let pos = 0; pos < T; pos++) {
    for (let j = 0; j < half; j++) {
      const angle = pos * Math.pow(theta, (-2 * j) / headDim);
      t[2 * (pos * half + j)] = Math.cos(angle);
      t[2 * (pos * half + j) + 1] = Math.sin(angle);
    }
  }
  return t;
}

/** The table of no positional encoding: cos 1, sin 0 at every position (the rotation leaves each pair exactly as it is). */
export function identityRopeTable(T: number, headDim: number): Float32Array {
  const t = new Float32Array(T * headDim);
  for (let i = 0; i < t.length; i += 2) t[i] = 1;
  return t;
}

function tableSlice(gpu: GpuContext, T: number, headDim: number, theta: number): BufferSlice {
  let perGpu = tables.get(gpu);
  if (!perGpu) tables.set(gpu, (perGpu = new Map()));
  const key = `T=${T} headDim=${headDim} theta=${theta}`;
  let slice = perGpu.get(key);
  if (!slice) {
    const data = ropeTable(T, headDim, theta);
    slice = createLayoutArena(gpu, `rope.table ${key}`, (place) => place('table', data.length)).tensors;
    gpu.write(slice, data);
    perGpu.set(key, slice);
  }
  return slice;
}

/** Rotates (or, with inverse, un-rotates) every pair of x into out; in place when out is x. */
export async function ropeDispatch(gpu: GpuContext, a: RopeArgs): Promise<Dispatch> {
  const label = `rope${a.inverse ? '.inverse' : ''}`;
  checkDims(label, { rows: a.rows, T: a.T, heads: a.heads, headDim: a.headDim });
  if (a.headDim % 2 !== 0) argumentError(label, 'headDim', `headDim must be even (got ${a.headDim})`);
  if (!(Number.isFinite(a.theta) && a.theta > 0)) argumentError(label, 'theta', `theta must be a finite number > 0 (got ${a.theta})`);
  const n = a.rows * a.heads * a.headDim;
  checkSlices(label, { x: [a.x, n], out: [a.out, n] }, { inPlace: [['x', 'out']] });
  const inPlace = a.x.buffer === a.out.buffer && a.x.offset === a.out.offset;
  const half = a.headDim / 2;
  const pairs = a.rows * a.heads * half;
  const table = tableSlice(gpu, a.T, a.headDim, a.theta);
  const uniforms = { P: { pairs, T: a.T, heads: a.heads, half, inverse: a.inverse ? 1 : 0 } };
  return inPlace
    ? kernelDispatch(
        gpu,
        ROPE_KERNEL,
        'applyInPlace',
        { uniforms, storage: { table, x: a.x }, constants: { WG }, label },
        grid1d(ceilDiv(pairs, WG)),
      )
    : kernelDispatch(
        gpu,
        ROPE_KERNEL,
        'apply',
        { uniforms, storage: { table, x: a.x, out: a.out }, constants: { WG }, label },
        grid1d(ceilDiv(pairs, WG)),
      );
}
