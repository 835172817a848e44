// Wrapper for shaders/attention_fwd.wgsl, attention_bwd_dq.wgsl and attention_bwd_dkdv.wgsl:
// dense causal attention with grouped-query heads (flash style, deterministic backward). WGSL has
// no #include: each kernel is its shared parts (attention_common.wgsl with the NSA kernels, the
// dense uniform, the query-row tiles of forward and dQ, the key-outer dK/dV of
// attention_keys.wgsl) concatenated here in front of the kernel's own file.
import bwdCommonCode from '../../shaders/attention_bwd_common.wgsl?raw';
import dkdvCode from '../../shaders/attention_bwd_dkdv.wgsl?raw';
import dqCode from '../../shaders/attention_bwd_dq.wgsl?raw';
import commonCode from '../../shaders/attention_common.wgsl?raw';
import denseCode from '../../shaders/attention_dense.wgsl?raw';
import denseRowsCode from '../../shaders/attention_dense_rows.wgsl?raw';
import fwdCode from '../../shaders/attention_fwd.wgsl?raw';
import keysCode from '../../shaders/attention_keys.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv } from '../gpu/grid';
import { f32, type UniformWord } from '../gpu/uniforms';
import type { AttentionShape } from '../spec/shapes';


const FWD = commonCode + denseCode + denseRowsCode + fwdCode;
const DQ = commonCode + bwdCommonCode + denseCode + denseRowsCode + dqCode;
const DKDV = commonCode + bwdCommonCode + denseCode + keysCode + dkdvCode;

/** Rows (forward, dQ; WG in attention_dense_rows.wgsl) or key slices (dK/dV: NS·KB) per workgroup. */
const WG = 64;
/** Workgroup memory budget per kernel (the portable WebGPU minimum). */
const SHARED_FLOATS = 16384 / 4;
/** Largest head dim: the shaders keep up to 32 vec4 of a row in registers. */
export const ATTENTION_MAX_HEAD_DIM = 128;

export interface AttentionTiling {
  DK4: number;
  DV4: number;
  /** Keys per staged K/V tile (forward, dQ): a multiple of 8 (the forward's rescale chunk), at most 64. */
  BK: number;
  /** Threads per key in dK/dV, each owning KC4 (VC4) vec4 columns of k (v). */
  NS: number;
  KC4: number;
  VC4: number;
  /** Query rows per staged tile in dK/dV. */
  BQ: number;
}

/** Tile sizes for head dims dk, dv so that every kernel stays within 16 KiB of workgroup memory. */
export function attentionTiling(dk: number, dv: number): AttentionTiling {
  const DK4 = Math.ceil(dk / 4);
  const DV4 = Math.ceil(dv / 4);
  // ks + vs: BK·(DK4 + DV4) vec4.
  const BK = Math.min(64, Math.floor(SHARED_FLOATS / 4 / (DK4 + DV4) / 8) * 8);
  const NS = [1, 2, 4].find((n) => Math.ceil(DK4 / n) <= 8 && Math.ceil(DV4 / n) <= 8) ?? 4;
  const KC4 = Math.ceil(DK4 / NS);
  const VC4 = Math.ceil(DV4 / NS);
  // qs + dos: BQ·NS·(KC4 + VC4) vec4; rowT, rowLse, rowDelta: 3·BQ; partS, partD: 2·BQ·WG floats
  // (allocated only when NS > 1; counted always). At most 16: the row loops unroll, and longer ones
  // mostly cost compile time.
  const BQ = Math.min(16, Math.floor(SHARED_FLOATS / (4 * NS * (KC4 + VC4) + 3 + 2 * WG)));
  return { DK4, DV4, BK, NS, KC4, VC4, BQ };
}

type Slices<N extends string> = { [K in N]: BufferSlice };

/** Rejects bad shapes and short slices, naming the field, before any GPU work. */
function validate(gpu: GpuContext, label: string, a: AttentionShape, need: Record<string, [BufferSlice, number]>): void {
  for (const f of ['B', 'T', 'H', 'G', 'dk', 'dv'] as const) {
    const x = a[f];
    if (!Number.isInteger(x) || x < 1) throw new Error(`${label}: ${f} = ${x} must be an integer ≥ 1`);
  }
  if (a.H % a.G !== 0) throw new Error(`${label}: H = ${a.H} must be a multiple of G = ${a.G}`);
  for (const f of ['dk', 'dv'] as const) {
    if (a[f] > ATTENTION_MAX_HEAD_DIM) throw new Error(`${label}: ${f} = ${a[f]} exceeds ${ATTENTION_MAX_HEAD_DIM}`);
  }
  for (const [name, [slice, floats]] of Object.entries(need)) {
    if (slice.size < floats * 4) throw new Error(`${label}: ${name} holds ${slice.size} bytes; needs ${floats * 4}`);
  }
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const rows = a.T * (a.H / a.G);
  if (ceilDiv(rows, WG) > max) throw new Error(`${label}: T·H/G = ${rows} needs more than ${max} workgroups`);
  if (a.G > max) throw new Error(`${label}: G = ${a.G} exceeds ${max} workgroups`);
  if (a.B > max) throw new Error(`${label}: B = ${a.B} exceeds ${max} workgroups`);
}

function uniformWords(s: AttentionShape): UniformWord[] {
  const scale = 1 / Math.sqrt(s.dk);
  return [s.T, s.H, s.G, s.H / s.G, f32(scale * Math.LOG2E), f32(scale)];
}

/** out [B,T,H,dv] and lse [B,H,T] (natural log) of causal softmax(q kᵀ / √dk) v. */
export async function attentionForwardDispatch(
  gpu: GpuContext,
  a: AttentionShape & Slices<'q' | 'k' | 'v' | 'out' | 'lse'>,
): Promise<Dispatch> {
  const { B, T, H, G, dk, dv } = a;
  const nq = B * T * H;
  const nk = B * T * G;
  validate(gpu, 'attention.forward', a, {
    q: [a.q, nq * dk], k: [a.k, nk * dk], v: [a.v, nk * dv], out: [a.out, nq * dv], lse: [a.lse, B * H * T],
  });
  const t = attentionTiling(dk, dv);
  return gpu.dispatch(
    { code: FWD, entryPoint: 'forward', constants: { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, BK: t.BK }, label: 'attention.forward' },
    [gpu.uniform(uniformWords(a)), a.q, a.k, a.v, a.out, a.lse],
    [ceilDiv(T * (H / G), WG), G, B],
  );
}

/**
 * Backward of attentionForwardDispatch: gradQ, gradK, gradV are overwritten; delta is scratch
 * f32 [B,H,T] (rowsum(dout ∘ out), written by the first dispatch, read by the second).
 */
export async function attentionBackwardDispatches(
  gpu: GpuContext,
  a: AttentionShape & Slices<'q' | 'k' | 'v' | 'out' | 'lse' | 'dout' | 'delta' | 'gradQ' | 'gradK' | 'gradV'>,
): Promise<Dispatch[]> {
  const { B, T, H, G, dk, dv } = a;
  const nq = B * T * H;
  const nk = B * T * G;
  validate(gpu, 'attention.backward', a, {
    q: [a.q, nq * dk], k: [a.k, nk * dk], v: [a.v, nk * dv], out: [a.out, nq * dv], lse: [a.lse, B * H * T],
    dout: [a.dout, nq * dv], delta: [a.delta, B * H * T],
    gradQ: [a.gradQ, nq * dk], gradK: [a.gradK, nk * dk], gradV: [a.gradV, nk * dv],
  });
  const t = attentionTiling(dk, dv);
  const u = gpu.uniform(uniformWords(a));
  const dq = await gpu.dispatch(
    { code: DQ, entryPoint: 'backwardDq', constants: { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, BK: t.BK }, label: 'attention.backward.dq' },
    [u, a.q, a.k, a.v, a.lse, a.dout, a.delta, a.gradQ, a.out],
    [ceilDiv(T * (H / G), WG), G, B],
  );
  const keysPerWg = WG / t.NS;
  const dkdv = await gpu.dispatch(
    {
      code: DKDV,
      entryPoint: 'backwardDkDv',
      constants: { DK: dk, DV: dv, DK4: t.DK4, DV4: t.DV4, NS: t.NS, KB: keysPerWg, KC4: t.KC4, VC4: t.VC4, BQ: t.BQ },
      label: 'attention.backward.dkdv',
    },
    [u, a.q, a.k, a.v, a.lse, a.dout, a.delta, a.gradK, a.gradV],
    [ceilDiv(T, keysPerWg), G, B],
  );
  return [dq, dkdv];
}
