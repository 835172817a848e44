// Wrapper for shaders/nsa_gates.wgsl: NSA gate sigmoid (+ ablation), the gated mix of the three
// branch outputs, and its backward down to the gate logits (or to the gate values, for the op). The logits x·Wg and the backward
// matmuls (dx = dlogits·Wgᵀ, dWg += xᵀ·dlogits) are the caller's (matmul.ts).
// Layouts: logits, gates, dlogits [rows, 3H] with column 3i + c, c ∈ (cmp, sel, win);
// branch outputs and their gradients [rows, H, dv]; rows = B·T.
import code from '../../shaders/nsa_gates.wgsl?raw';
import { type GateAblation } from '../definitions/gates';
import { BRANCHES } from '../definitions/gates';
import type { BufferSlice } from '../gpu/arena';
import { argumentError, checkDims, checkSlices, type SliceArg } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { defineKernel, kernelDispatch, type KernelVariant } from '../gpu/kernel-interface';

const WG = 256;
const TC = 16; // colSum columns per workgroup
const DG_WG = 32; // combineBackwardDg's workgroup (shaders/nsa_gates.wgsl)

const F = 'array<f32>';
export const NSA_GATES_KERNEL = defineKernel({
  name: 'nsa_gates',
  files: [['nsa_gates.wgsl', code]],
  uniforms: {
    P: {
      struct: 'Params',
      fields: [
        ['rows', 'u32'],
        ['H', 'u32'],
        ['dv', 'u32'],
        ['total', 'u32', 'elements of the launch'],
        ['mode', 'u32', '0: learned gates; 1: the constants below (force / freeze ablation); 2: see MODE_GATES'],
        ['constCmp', 'f32', 'mode 1: the cmp gate'],
        ['constSel', 'f32', 'mode 1: the sel gate'],
        ['constWin', 'f32', 'mode 1: the win gate'],
      ],
    },
  },
  // A name keeps one binding index in every entry point (kernelHeader): gates come first, the
  // branch outputs (or their gradients) next, and dout after them in both backwards.
  entries: {
    gateForward: [
      ['gates', F],
      ['logits', F],
      ['bias', F],
    ],
    combineForward: [
      ['gates', F],
      ['oCmp', F],
      ['oSel', F],
      ['oWin', F],
      ['out', F],
    ],
    combineBackwardDo: [
      ['gates', F],
      ['dCmp', F],
      ['dSel', F],
      ['dWin', F],
      ['dout', F],
    ],
    combineBackwardDg: [
      ['gates', F],
      ['oCmp', F],
      ['oSel', F],
      ['oWin', F],
      ['dout', F],
      ['gateGrad', F],
    ],
    colSum: [
      ['dlogits', F],
      ['dbias', F],
    ],
  },
});

export const NSA_GATES_VARIANTS: readonly KernelVariant[] = Object.keys(NSA_GATES_KERNEL.spec.entries).map((entryPoint) => ({
  kernel: NSA_GATES_KERNEL,
  entryPoint,
}));

type Ablation = { mode: number; constCmp: number; constSel: number; constWin: number };

export interface GateForwardArgs {
  /** [rows, 3H] = x·Wg (bias not included). */
  logits: BufferSlice;
  /** [3H]. */
  bias: BufferSlice;
  /** [rows, 3H], overwritten: sigmoid(logits + bias), then the ablation. */
  gates: BufferSlice;
  rows: number;
  H: number;
  ablation: GateAblation;
}

export interface CombineForwardArgs {
  gates: BufferSlice;
  oCmp: BufferSlice;
  oSel: BufferSlice;
  oWin: BufferSlice;
  /** [rows, H, dv], overwritten. */
  out: BufferSlice;
  rows: number;
  H: number;
  dv: number;
}

/** What both mix backwards read and write besides their gate gradient. */
interface MixBackwardArgs {
  /** [rows, H, dv]. */
  dout: BufferSlice;
  gates: BufferSlice;
  oCmp: BufferSlice;
  oSel: BufferSlice;
  oWin: BufferSlice;
  /** [rows, H, dv] each, overwritten with g_c·dO. */
  dCmp: BufferSlice;
  dSel: BufferSlice;
  dWin: BufferSlice;
  rows: number;
  H: number;
  dv: number;
}

export interface CombineBackwardArgs extends MixBackwardArgs {
  /** [rows, 3H], overwritten: ⟨dO, O_c⟩·g(1 − g), or 0 under an ablation. */
  dlogits: BufferSlice;
  /** [3H], accumulated (+=) in a fixed order. */
  dbias: BufferSlice;
  ablation: GateAblation;
}

export interface CombineBackwardGatesArgs extends MixBackwardArgs {
  /** [rows, 3H], overwritten: ⟨dO, O_c⟩, the gradient wrt the gate values (no sigmoid). */
  dgates: BufferSlice;
}

/** mode word of combineBackwardDg that stops at the gate values (MODE_GATES in the shader). */
const MODE_GATES = 2;

/** Uniform fields mode, constCmp, constSel, constWin of an ablation (reference semantics: applyGateAblation). */
function ablationWords(label: string, ab: GateAblation): Ablation {
  if (ab.kind === 'none') return { mode: 0, constCmp: 0, constSel: 0, constWin: 0 };
  let v: readonly number[];
  if (ab.kind === 'force') {
    if (!BRANCHES.includes(ab.branch)) argumentError(label, 'ablation', `unknown branch ${String(ab.branch)}`);
    v = BRANCHES.map((b) => (b === ab.branch ? 1 : 0));
  } else {
    v = typeof ab.value === 'number' ? [ab.value, ab.value, ab.value] : ab.value;
    if (v.length !== 3 || !v.every(Number.isFinite)) argumentError(label, 'ablation', `freeze value must be finite (one or three numbers)`);
  }
  return { mode: 1, constCmp: v[0], constSel: v[1], constWin: v[2] };
}

/** Dims (rows may be 0; H, dv ≥ 1), then slice sizes and no overlap (every binding is writable). */
function checkArgs(label: string, dims: Record<string, number>, want: Record<string, SliceArg>): void {
  checkDims(label, dims, { rows: 0 });
  checkSlices(label, want);
}

const uniform = (rows: number, H: number, dv: number, total: number, ab: Ablation) => ({ P: { rows, H, dv, total, ...ab } });

/** gates = sigmoid(logits + bias), replaced by constants under a force / freeze ablation. */
export async function gateForwardDispatch(gpu: GpuContext, a: GateForwardArgs): Promise<Dispatch> {
  const label = 'nsa_gates.gateForward';
  const { rows, H } = a;
  const ab = ablationWords(label, a.ablation);
  checkArgs(label, { rows, H }, { logits: [a.logits, rows * 3 * H], bias: [a.bias, 3 * H], gates: [a.gates, rows * 3 * H] });
  const total = rows * 3 * H;
  return kernelDispatch(
    gpu,
    NSA_GATES_KERNEL,
    'gateForward',
    { uniforms: uniform(rows, H, 0, total, ab), storage: { gates: a.gates, logits: a.logits, bias: a.bias }, label },
    grid1d(ceilDiv(total, WG)),
  );
}

/** out[r,i] = g_cmp·O_cmp + g_sel·O_sel + g_win·O_win. */
export async function combineForwardDispatch(gpu: GpuContext, a: CombineForwardArgs): Promise<Dispatch> {
  const label = 'nsa_gates.combineForward';
  const { rows, H, dv } = a;
  const n = rows * H * dv;
  checkArgs(
    label,
    { rows, H, dv },
    {
      gates: [a.gates, rows * 3 * H],
      oCmp: [a.oCmp, n],
      oSel: [a.oSel, n],
      oWin: [a.oWin, n],
      out: [a.out, n],
    },
  );
  return kernelDispatch(
    gpu,
    NSA_GATES_KERNEL,
    'combineForward',
    {
      uniforms: uniform(rows, H, dv, n, ablationWords(label, { kind: 'none' })),
      storage: { gates: a.gates, oCmp: a.oCmp, oSel: a.oSel, oWin: a.oWin, out: a.out },
      label,
    },
    grid1d(ceilDiv(n, WG)),
  );
}

/** The slices of a mix backward besides its gate gradient, with their element counts. */
function mixBackwardSlices(a: MixBackwardArgs): Record<string, SliceArg> {
  const n = a.rows * a.H * a.dv;
  return {
    dout: [a.dout, n],
    gates: [a.gates, a.rows * 3 * a.H],
    oCmp: [a.oCmp, n],
    oSel: [a.oSel, n],
    oWin: [a.oWin, n],
    dCmp: [a.dCmp, n],
    dSel: [a.dSel, n],
    dWin: [a.dWin, n],
  };
}

/**
 * The two passes both mix backwards share: dO_c = g_c·dO, and ⟨dO, O_c⟩ into the gate gradient `dg`
 * [rows, 3H] (named `dgName` in the label), taken to the logits or stopped at the gate values by
 * the mode words.
 */
function mixBackwardPasses(
  gpu: GpuContext,
  label: string,
  a: MixBackwardArgs,
  mode: Ablation,
  dgName: string,
  dg: BufferSlice,
): Promise<Dispatch>[] {
  const { rows, H, dv } = a;
  const n = rows * H * dv;
  return [
    kernelDispatch(
      gpu,
      NSA_GATES_KERNEL,
      'combineBackwardDo',
      {
        uniforms: uniform(rows, H, dv, n, mode),
        storage: { gates: a.gates, dCmp: a.dCmp, dSel: a.dSel, dWin: a.dWin, dout: a.dout },
        label: `${label}.dO`,
      },
      grid1d(ceilDiv(n, WG)),
    ),
    kernelDispatch(
      gpu,
      NSA_GATES_KERNEL,
      'combineBackwardDg',
      {
        uniforms: uniform(rows, H, dv, rows * H, mode),
        storage: { gates: a.gates, oCmp: a.oCmp, oSel: a.oSel, oWin: a.oWin, dout: a.dout, gateGrad: dg },
        label: `${label}.${dgName}`,
      },
      grid1d(ceilDiv(rows * H, DG_WG)),
    ),
  ];
}

/** [dO_c = g_c·dO, dlogits = ⟨dO, O_c⟩·g(1 − g) (0 under an ablation), dbias += Σ_rows dlogits]. */
export async function combineBackwardDispatches(gpu: GpuContext, a: CombineBackwardArgs): Promise<Dispatch[]> {
  const label = 'nsa_gates.combineBackward';
  const { rows, H, dv } = a;
  const ab = ablationWords(label, a.ablation);
  checkArgs(label, { rows, H, dv }, { ...mixBackwardSlices(a), dlogits: [a.dlogits, rows * 3 * H], dbias: [a.dbias, 3 * H] });
  return Promise.all([
    ...mixBackwardPasses(gpu, label, a, ab, 'dlogits', a.dlogits),
    kernelDispatch(
      gpu,
      NSA_GATES_KERNEL,
      'colSum',
      { uniforms: uniform(rows, H, dv, 0, ab), storage: { dlogits: a.dlogits, dbias: a.dbias }, label: `${label}.dbias` },
      [ceilDiv(3 * H, TC)],
    ),
  ]);
}

/** [dO_c = g_c·dO, dgates = ⟨dO, O_c⟩] (both overwrite): the mix backward for gates given as values. */
export async function combineBackwardGatesDispatches(gpu: GpuContext, a: CombineBackwardGatesArgs): Promise<Dispatch[]> {
  const label = 'nsa_gates.combineBackwardGates';
  checkArgs(label, { rows: a.rows, H: a.H, dv: a.dv }, { ...mixBackwardSlices(a), dgates: [a.dgates, a.rows * 3 * a.H] });
  return Promise.all(mixBackwardPasses(gpu, label, a, { mode: MODE_GATES, constCmp: 0, constSel: 0, constWin: 0 }, 'dgates', a.dgates));
}
