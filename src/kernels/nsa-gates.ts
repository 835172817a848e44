// Wrapper for shaders/nsa_gates.wgsl: NSA gate sigmoid (+ ablation), the gated mix of the three
// branch outputs, and its backward down to the gate logits (or to the gate values, for the op). The logits x·Wg and the backward
// matmuls (dx = dlogits·Wgᵀ, dWg += xᵀ·dlogits) are the caller's (matmul.ts).
// Layouts: logits, gates, dlogits [rows, 3H] with column 3i + c, c ∈ (cmp, sel, win);
// branch outputs and their gradients [rows, H, dv]; rows = B·T.
import code from '../../shaders/nsa_gates.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import { checkDims, checkSlices } from '../gpu/checks';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';
import { f32, type UniformWord } from '../gpu/uniforms';
import { type GateAblation } from '../spec/gates';
import { BRANCHES } from '../spec/gates';


const WG = 256;
const TC = 16; // colSum columns per workgroup

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

/** Uniform words [mode, c0, c1, c2] of an ablation (reference semantics: applyGateAblation). */
function ablationWords(label: string, ab: GateAblation) {
  if (ab.kind === 'none') return [0, f32(0), f32(0), f32(0)];
  let v: readonly number[];
  if (ab.kind === 'force') {
    if (!BRANCHES.includes(ab.branch)) throw new Error(`${label}: unknown branch ${String(ab.branch)}`);
    v = BRANCHES.map((b) => (b === ab.branch ? 1 : 0));
  } else {
    v = typeof ab.value === 'number' ? [ab.value, ab.value, ab.value] : ab.value;
    if (v.length !== 3 || !v.every(Number.isFinite)) throw new Error(`${label}: freeze value must be finite (one or three numbers)`);
  }
  return [1, f32(v[0]), f32(v[1]), f32(v[2])];
}

/** Dims (rows may be 0; H, dv ≥ 1), then slice sizes and no overlap (every binding is writable). */
function checkArgs(label: string, dims: Record<string, number>, want: Record<string, [BufferSlice, number]>): void {
  checkDims(label, dims, { rows: 0 });
  checkSlices(label, want);
}

const uniform = (gpu: GpuContext, rows: number, H: number, dv: number, total: number, ab: ReturnType<typeof ablationWords>) =>
  gpu.uniform([rows, H, dv, total, ...ab]);

/** gates = sigmoid(logits + bias), replaced by constants under a force / freeze ablation. */
export async function gateForwardDispatch(gpu: GpuContext, a: GateForwardArgs): Promise<Dispatch> {
  const label = 'nsa_gates.gateForward';
  const { rows, H } = a;
  const ab = ablationWords(label, a.ablation);
  checkArgs(label, { rows, H }, { logits: [a.logits, rows * 3 * H], bias: [a.bias, 3 * H], gates: [a.gates, rows * 3 * H] });
  const total = rows * 3 * H;
  return gpu.dispatch(
    { code, entryPoint: 'gateForward', label },
    [uniform(gpu, rows, H, 0, total, ab), a.logits, a.bias, a.gates],
    grid1d(ceilDiv(total, WG)),
  );
}

/** out[r,i] = g_cmp·O_cmp + g_sel·O_sel + g_win·O_win. */
export async function combineForwardDispatch(gpu: GpuContext, a: CombineForwardArgs): Promise<Dispatch> {
  const label = 'nsa_gates.combineForward';
  const { rows, H, dv } = a;
  const n = rows * H * dv;
  checkArgs(label, { rows, H, dv }, {
    gates: [a.gates, rows * 3 * H], oCmp: [a.oCmp, n], oSel: [a.oSel, n], oWin: [a.oWin, n], out: [a.out, n],
  });
  return gpu.dispatch(
    { code, entryPoint: 'combineForward', label },
    [uniform(gpu, rows, H, dv, n, ablationWords(label, { kind: 'none' })), a.gates, a.oCmp, a.oSel, a.oWin, a.out],
    grid1d(ceilDiv(n, WG)),
  );
}

/** The slices of a mix backward besides its gate gradient, with their element counts. */
function mixBackwardSlices(a: MixBackwardArgs): Record<string, [BufferSlice, number]> {
  const n = a.rows * a.H * a.dv;
  return {
    dout: [a.dout, n], gates: [a.gates, a.rows * 3 * a.H], oCmp: [a.oCmp, n], oSel: [a.oSel, n], oWin: [a.oWin, n],
    dCmp: [a.dCmp, n], dSel: [a.dSel, n], dWin: [a.dWin, n],
  };
}

/**
 * The two passes both mix backwards share: dO_c = g_c·dO, and ⟨dO, O_c⟩ into the gate gradient `dg`
 * [rows, 3H] (named `dgName` in the label), taken to the logits or stopped at the gate values by
 * the mode words.
 */
function mixBackwardPasses(gpu: GpuContext, label: string, a: MixBackwardArgs, mode: UniformWord[], dgName: string, dg: BufferSlice): Promise<Dispatch>[] {
  const { rows, H, dv } = a;
  const n = rows * H * dv;
  return [
    gpu.dispatch(
      { code, entryPoint: 'combineBackwardDo', label: `${label}.dO` },
      [uniform(gpu, rows, H, dv, n, mode), a.gates, a.dout, a.dCmp, a.dSel, a.dWin],
      grid1d(ceilDiv(n, WG)),
    ),
    gpu.dispatch(
      { code, entryPoint: 'combineBackwardDg', label: `${label}.${dgName}` },
      [uniform(gpu, rows, H, dv, rows * H, mode), a.gates, a.dout, a.oCmp, a.oSel, a.oWin, dg],
      grid1d(ceilDiv(rows * H, WG)),
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
    gpu.dispatch(
      { code, entryPoint: 'colSum', label: `${label}.dbias` },
      [uniform(gpu, rows, H, dv, 0, ab), a.dlogits, a.dbias],
      [ceilDiv(3 * H, TC)],
    ),
  ]);
}

/** [dO_c = g_c·dO, dgates = ⟨dO, O_c⟩] (both overwrite): the mix backward for gates given as values. */
export async function combineBackwardGatesDispatches(gpu: GpuContext, a: CombineBackwardGatesArgs): Promise<Dispatch[]> {
  const label = 'nsa_gates.combineBackwardGates';
  checkArgs(label, { rows: a.rows, H: a.H, dv: a.dv }, { ...mixBackwardSlices(a), dgates: [a.dgates, a.rows * 3 * a.H] });
  return Promise.all(mixBackwardPasses(gpu, label, a, [MODE_GATES, f32(0), f32(0), f32(0)], 'dgates', a.dgates));
}
