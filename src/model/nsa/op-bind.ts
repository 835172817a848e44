// The standalone NSA op, GPU-resident form: validation of its shape and config, and a binding of
// the NSA attention core (core-plan.ts) to caller-owned device tensors. Binding allocates the op's
// own saved/scratch arena once; its forward and backward are prebuilt dispatch lists the caller
// encodes into its own passes (no buffer, pipeline or bind group is created per call).
// Layouts as docs/nsa-spec.md with a batch dim: q [B,T,H,dk], k*/v* [B,T,G,dk|dv], gates [B,T,H,3]
// (cmp, sel, win), out and per-branch outputs [B,T,H,dv], selection int32 [B,T,G,nSel].
import { type ConfigIssue, InvalidConfigError } from '../../definitions/config-issue';
import { type NsaConfig, validateNsaConfig } from '../../definitions/nsa-config';
import type { AttentionShape } from '../../definitions/shapes';
import { type Arena, type BufferSlice, createArena, layoutEntries, type PlaceTensor, resolveLayout } from '../../gpu/arena';
import type { Dispatch, GpuContext } from '../../gpu/context';
import { NSA_ATTN_MAX_HEAD_DIM, NSA_ATTN_MAX_HPG } from '../../kernels/nsa-attention';
import { nsaCoreBackward, nsaCoreForward, type NsaCoreSaved, nsaCoreSavedTensors, nsaCoreScratchTensors } from './core';

/** Device tensors the op reads in the forward. */
export interface NsaOpInputSlices {
  q: BufferSlice;
  kCmp: BufferSlice;
  vCmp: BufferSlice;
  kSel: BufferSlice;
  vSel: BufferSlice;
  kWin: BufferSlice;
  vWin: BufferSlice;
  gates: BufferSlice;
}

/** Device tensors of the backward: dout is read, every other one overwritten. */
export interface NsaOpGradSlices {
  dout: BufferSlice;
  dq: BufferSlice;
  dkCmp: BufferSlice;
  dvCmp: BufferSlice;
  dkSel: BufferSlice;
  dvSel: BufferSlice;
  dkWin: BufferSlice;
  dvWin: BufferSlice;
  dgates: BufferSlice;
}

export interface NsaOpBindArgs {
  inputs: NsaOpInputSlices;
  /** [B,T,H,dv], overwritten by the forward. */
  out: BufferSlice;
  /** Omit for a forward-only binding (no backward scratch is allocated). */
  grads?: NsaOpGradSlices;
}

export interface NsaOpBinding {
  /** Encode in order (GpuContext.encode) after writing the inputs. */
  readonly forward: readonly Dispatch[];
  /** Encode after the forward (same or a later pass), with dout written. Empty without grads. */
  readonly backward: readonly Dispatch[];
  /** The forward's intermediates: sel (int32 selection), oCmp/oSel/oWin, lse* [B,H,T], ... */
  readonly saved: NsaCoreSaved;
  /** Frees the op's own arena (not the caller's tensors). */
  destroy(): void;
}

/** Every input/output tensor of the op with its element count. */
export function nsaOpTensorSizes(s: AttentionShape, cfg: NsaConfig) {
  const N = s.B * s.T;
  const qk = N * s.H * s.dk;
  const kk = N * s.G * s.dk;
  const kv = N * s.G * s.dv;
  return {
    inputs: { q: qk, kCmp: kk, vCmp: kv, kSel: kk, vSel: kv, kWin: kk, vWin: kv, gates: N * s.H * 3 },
    out: N * s.H * s.dv,
    selection: N * s.G * cfg.nSel,
    grads: { dout: N * s.H * s.dv, dq: qk, dkCmp: kk, dvCmp: kv, dkSel: kk, dvSel: kv, dkWin: kk, dvWin: kv, dgates: N * s.H * 3 },
  };
}

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/**
 * Every reason the op cannot run this shape and config (empty: valid): the spec's config rules
 * (validateNsaConfig, fields `nsa.*` and `shape.*`), φ = avg only, B, T ≥ 1, and the kernels'
 * limits (head dims ≤ 128, heads per group ≤ 64, the selection row fitting workgroup memory).
 */
export function validateNsaOp(shape: AttentionShape, cfg: NsaConfig): ConfigIssue[] {
  const out = validateNsaConfig(cfg, shape);
  const bad = (field: string, message: string) => out.push({ field, message });
  if (cfg.phi === 'mlp') bad('nsa.phi', `the NSA op supports phi = 'avg' only (φ = mlp needs learned weights; use the model)`);
  if (!isInt(shape.B) || shape.B < 1) bad('shape.B', `B must be an integer ≥ 1 (got ${shape.B})`);
  if (isInt(shape.T) && shape.T < 1) bad('shape.T', `the NSA op needs T ≥ 1 (got ${shape.T})`);
  for (const f of ['dk', 'dv'] as const) {
    if (isInt(shape[f]) && shape[f] > NSA_ATTN_MAX_HEAD_DIM) bad(`shape.${f}`, `${f} must be ≤ ${NSA_ATTN_MAX_HEAD_DIM} (got ${shape[f]})`);
  }
  const { H, G } = shape;
  if (isInt(H) && isInt(G) && G >= 1 && H % G === 0 && H / G > NSA_ATTN_MAX_HPG) {
    bad('shape.H', `at most ${NSA_ATTN_MAX_HPG} heads per group (H/G = ${H / G})`);
  }
  return out;
}

/**
 * An invalid op shape or config (public API, thrown by assertNsaOp, bindNsaOp and NsaOp): an
 * InvalidConfigError whose `issues` name the fields (`nsa.*`, `shape.*`).
 */
export class NsaOpConfigError extends InvalidConfigError {
  override readonly name: string = 'NsaOpConfigError';

  constructor(issues: readonly ConfigIssue[], options?: ErrorOptions) {
    super('invalid NSA op', issues, options);
  }
}

export function assertNsaOp(shape: AttentionShape, cfg: NsaConfig): void {
  const issues = validateNsaOp(shape, cfg);
  if (issues.length > 0) throw new NsaOpConfigError(issues);
}

/** Sizes, and pairwise disjointness (WebGPU rejects overlapping writable bindings). */
function checkSlices(shape: AttentionShape, cfg: NsaConfig, a: NsaOpBindArgs): void {
  const z = nsaOpTensorSizes(shape, cfg);
  type Row = [string, BufferSlice | undefined, number];
  const list: Row[] = [
    ...(Object.keys(z.inputs) as Array<keyof NsaOpInputSlices>).map((k): Row => [k, a.inputs[k], z.inputs[k]]),
    ['out', a.out, z.out],
  ];
  const grads = a.grads;
  if (grads) list.push(...(Object.keys(z.grads) as Array<keyof NsaOpGradSlices>).map((k): Row => [k, grads[k], z.grads[k]]));
  for (const [name, s, n] of list) {
    if (!s) throw new Error(`NsaOp.bind: ${name} is missing`);
    if (s.size < n * 4) throw new Error(`NsaOp.bind: ${name} holds ${s.size} bytes, needs ${n * 4}`);
  }
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [x, y] = [list[i][1]!, list[j][1]!];
      if (x.buffer === y.buffer && x.offset < y.offset + y.size && y.offset < x.offset + x.size)
        throw new Error(`NsaOp.bind: ${list[i][0]} and ${list[j][0]} overlap`);
    }
  }
}

/**
 * Binds the op to device tensors: validates (before any GPU work), allocates the op's arena
 * (saved tensors, and backward scratch when grads are given) and builds both dispatch lists.
 * The gradient wrt the gates is wrt their values (no sigmoid).
 */
export async function bindNsaOp(gpu: GpuContext, shape: AttentionShape, cfg: NsaConfig, a: NsaOpBindArgs): Promise<NsaOpBinding> {
  assertNsaOp(shape, cfg);
  checkSlices(shape, cfg, a);
  const s: AttentionShape = { B: shape.B, T: shape.T, H: shape.H, G: shape.G, dk: shape.dk, dv: shape.dv };
  // Saved tensors, and backward scratch when grads are given.
  const tensors = (place: PlaceTensor) => ({
    saved: nsaCoreSavedTensors(place, 'saved.', s, cfg),
    scratch: a.grads ? nsaCoreScratchTensors(place, 'scratch.', s, cfg) : undefined,
  });
  const arena: Arena = createArena(gpu, 'nsa-op', layoutEntries(tensors));
  const destroy = () => arena.buffers.forEach((b) => b.destroy());
  try {
    const { saved, scratch } = resolveLayout(tensors, arena);
    const { inputs: x, grads: g } = a;
    const io = {
      q: x.q,
      cmp: { k: x.kCmp, v: x.vCmp },
      sel: { k: x.kSel, v: x.vSel },
      win: { k: x.kWin, v: x.vWin },
      gates: x.gates,
      out: a.out,
      saved,
    };
    const forward = nsaCoreForward(gpu, s, cfg, io);
    const backward =
      g && scratch
        ? nsaCoreBackward(gpu, s, cfg, io, scratch, {
            dout: g.dout,
            dq: g.dq,
            cmp: { k: g.dkCmp, v: g.dvCmp },
            sel: { k: g.dkSel, v: g.dvSel },
            win: { k: g.dkWin, v: g.dvWin },
            gates: { kind: 'gates', dgates: g.dgates },
          })
        : Promise.resolve([]);
    const [f, b] = await Promise.all([forward, backward]);
    return { forward: f, backward: b, saved, destroy };
  } catch (e) {
    destroy();
    throw e;
  }
}
