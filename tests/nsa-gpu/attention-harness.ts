// Shared fixtures for the NSA branch attention GPU tests: random inputs and selections, one GPU
// run (reverse index, forward, backward), and the float64 reference looped over the batch.
import { expect } from 'vitest';

import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import { type BufferSlice, createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import {
  type NsaAttnShape,
  type NsaAttnVariant,
  type NsaBranch,
  nsaBranchBackwardDispatches,
  nsaBranchForwardDispatch,
  nsaKeyRows,
} from '../../src/kernels/nsa-attention';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths } from '../../src/kernels/nsa-reverse-index';
import type { AttentionForward, AttentionGrads } from '../../src/reference/nsa/attention';
import { compressedBackwardRef, compressedForwardRef } from '../../src/reference/nsa/compressed';
import { selectedBackwardRef, selectedForwardRef } from '../../src/reference/nsa/selected';
import { selectBlocksRef } from '../../src/reference/nsa/selection';
import { windowBackwardRef, windowForwardRef } from '../../src/reference/nsa/window';
import { attentionGradFloor, expectClose, randn, rng } from '../helpers/compare';

export const BRANCHES: NsaBranch[] = ['cmp', 'sel', 'win'];
/** Both kernel variants run on SwiftShader: 'simple' is its default, 'group' the GPU default. */
export const VARIANTS: NsaAttnVariant[] = ['group', 'simple'];

/** Every (branch, variant) pair, for it.each. */
export const BRANCH_VARIANTS: Array<[NsaBranch, NsaAttnVariant]> = BRANCHES.flatMap((b) =>
  VARIANTS.map((v): [NsaBranch, NsaAttnVariant] => [b, v]),
);

export interface BranchInputs {
  /** [B,T,H,dk]. */
  q: Float32Array;
  /** [B,S,G,dk] / [B,S,G,dv], S = Ncmp(T) for cmp, else T. */
  k: Float32Array;
  v: Float32Array;
  /** [B,T,H,dv]. */
  dout: Float32Array;
  /** [B,T,G,nSel]. */
  sel: Int32Array;
}

export interface BranchOutputs {
  out: Float32Array;
  lse: Float32Array;
  dq: Float32Array;
  dk: Float32Array;
  dv: Float32Array;
  keysRead: Uint32Array;
}

/** Selection of each sequence by selectBlocksRef on random group scores (forced blocks + top-n). */
export function randomSelection(s: NsaAttnShape, cfg: NsaConfig, r: () => number): Int32Array {
  const nB = numSelBlocks(s.T, cfg);
  const per = s.T * s.G * cfg.nSel;
  const out = new Int32Array(s.B * per);
  for (let b = 0; b < s.B; b++) {
    const scores = new Float64Array(s.T * s.G * nB).map(() => r());
    out.set(selectBlocksRef(scores, seqShape(s), cfg), b * per);
  }
  return out;
}

export function seqShape(s: NsaAttnShape): NsaShape {
  return { T: s.T, H: s.H, G: s.G, dk: s.dk, dv: s.dv };
}

export function randomBranchInputs(s: NsaAttnShape, cfg: NsaConfig, branch: NsaBranch, seed: number, qScale = 1): BranchInputs {
  const r = rng(seed);
  const S = nsaKeyRows(branch, s.T, cfg);
  return {
    q: new Float32Array(randn(s.B * s.T * s.H * s.dk, r, qScale)),
    k: new Float32Array(randn(s.B * S * s.G * s.dk, r)),
    v: new Float32Array(randn(s.B * S * s.G * s.dv, r)),
    dout: new Float32Array(randn(s.B * s.T * s.H * s.dv, r)),
    sel: randomSelection(s, cfg, r),
  };
}

export interface RunOptions {
  /** Initial gradQ; with accumulateQ the kernel adds into it. */
  gradQInit?: Float32Array;
  accumulateQ?: boolean;
  /** Run the counting forward (keysRead). */
  count?: boolean;
  reruns?: number;
  /** Kernel variant; default by adapter ('simple' on SwiftShader). */
  variant?: NsaAttnVariant;
  /** false: no head-parts scratch, so the group kernels run dK/dV per group (default: per head, as the model). */
  headSplit?: boolean;
  /** Query pieces of the head split (cmp, win), with a scratch that holds them. Default: the adapter's choice. */
  querySplits?: number;
  /** sel, group kernels: dK/dV in one pass or two. Default: the device's choice (one where 9 storage bindings are allowed). */
  selKeyPasses?: 1 | 2;
}

/** Reverse index, forward and backward in one submit; outputs start as NaN so each must be written. */
export async function runBranch(
  gpu: GpuContext,
  s: NsaAttnShape,
  cfg: NsaConfig,
  branch: NsaBranch,
  x: BranchInputs,
  o: RunOptions = {},
): Promise<BranchOutputs[]> {
  const S = nsaKeyRows(branch, s.T, cfg);
  const nq = s.B * s.T * s.H;
  const nk = s.B * S * s.G;
  const rl = nsaReverseIndexLengths(s, cfg);
  const floats = {
    q: nq * s.dk,
    k: nk * s.dk,
    v: nk * s.dv,
    dout: nq * s.dv,
    out: nq * s.dv,
    lse: s.B * s.H * s.T,
    delta: s.B * s.H * s.T,
    gradQ: nq * s.dk,
    gradK: nk * s.dk,
    gradV: nk * s.dv,
    sel: x.sel.length,
    counts: rl.counts,
    offsets: rl.offsets,
    queries: rl.queries,
    keysRead: s.B * s.T * s.G,
    partK: (o.querySplits ?? 1) * s.B * S * s.H * s.dk,
    partV: (o.querySplits ?? 1) * s.B * S * s.H * s.dv,
  };
  const arena = createArena(
    gpu,
    'nsa-attn',
    Object.entries(floats).map(([name, n]) => ({ name, bytes: n * 4 })),
  );
  const sl = Object.fromEntries(Object.keys(floats).map((k) => [k, arena.get(k)])) as Record<keyof typeof floats, BufferSlice>;
  gpu.write(sl.q, x.q);
  gpu.write(sl.k, x.k);
  gpu.write(sl.v, x.v);
  gpu.write(sl.dout, x.dout);
  gpu.write(sl.sel, x.sel);
  const reverse = { counts: sl.counts, offsets: sl.offsets, queries: sl.queries };
  const base = { ...s, branch, cfg, q: sl.q, k: sl.k, v: sl.v, sel: sl.sel, out: sl.out, lse: sl.lse, variant: o.variant };
  const [fwd, rev, bwd] = await Promise.all([
    nsaBranchForwardDispatch(gpu, base, o.count ? sl.keysRead : undefined),
    branch === 'sel' ? nsaReverseIndexDispatches(gpu, { ...s, cfg, sel: sl.sel, reverse }) : Promise.resolve([]),
    nsaBranchBackwardDispatches(gpu, {
      ...base,
      reverse,
      dout: sl.dout,
      delta: sl.delta,
      gradQ: sl.gradQ,
      gradK: sl.gradK,
      gradV: sl.gradV,
      headParts: o.headSplit === false ? undefined : { k: sl.partK, v: sl.partV },
      querySplits: o.querySplits,
      selKeyPasses: o.selKeyPasses,
      accumulateQ: o.accumulateQ ?? false,
    }),
  ]);
  const results: BranchOutputs[] = [];
  for (let i = 0; i < (o.reruns ?? 1); i++) {
    for (const k of ['out', 'lse', 'delta', 'gradK', 'gradV'] as const) gpu.write(sl[k], new Float32Array(floats[k]).fill(NaN));
    gpu.write(sl.gradQ, o.gradQInit ?? new Float32Array(floats.gradQ).fill(NaN));
    gpu.write(sl.keysRead, new Uint32Array(floats.keysRead).fill(0xdeadbeef));
    gpu.run([...rev, fwd, ...bwd]);
    results.push({
      out: await gpu.readF32(sl.out, floats.out),
      lse: await gpu.readF32(sl.lse, floats.lse),
      dq: await gpu.readF32(sl.gradQ, floats.gradQ),
      dk: await gpu.readF32(sl.gradK, floats.gradK),
      dv: await gpu.readF32(sl.gradV, floats.gradV),
      keysRead: new Uint32Array(await gpu.read(sl.keysRead, floats.keysRead * 4)),
    });
  }
  for (const b of arena.buffers) b.destroy();
  return results;
}

export interface BranchReference {
  out: Float64Array;
  lse: Float64Array;
  dq: Float64Array;
  dk: Float64Array;
  dv: Float64Array;
  /** Floors under dq and dk's relative error, for gradients that cancel (attentionGradFloor). */
  floor: { dq: number; dk: number };
}

/** The float64 reference of one branch, per sequence, concatenated over the batch. */
export function referenceBranch(s: NsaAttnShape, cfg: NsaConfig, branch: NsaBranch, x: BranchInputs): BranchReference {
  const S = nsaKeyRows(branch, s.T, cfg);
  const shape = seqShape(s);
  const nq = s.T * s.H;
  const nk = S * s.G;
  const ref: BranchReference = {
    out: new Float64Array(s.B * nq * s.dv),
    lse: new Float64Array(s.B * s.H * s.T),
    dq: new Float64Array(s.B * nq * s.dk),
    dk: new Float64Array(s.B * nk * s.dk),
    dv: new Float64Array(s.B * nk * s.dv),
    floor: {
      dq: attentionGradFloor(1 / Math.sqrt(s.dk), x.dout, x.v, s.B * nk, x.k, s.B * nk),
      dk: attentionGradFloor(1 / Math.sqrt(s.dk), x.dout, x.v, s.B * nk, x.q, s.B * nq),
    },
  };
  for (let b = 0; b < s.B; b++) {
    const q = x.q.subarray(b * nq * s.dk, (b + 1) * nq * s.dk);
    const k = x.k.subarray(b * nk * s.dk, (b + 1) * nk * s.dk);
    const v = x.v.subarray(b * nk * s.dv, (b + 1) * nk * s.dv);
    const dO = x.dout.subarray(b * nq * s.dv, (b + 1) * nq * s.dv);
    const sel = x.sel.subarray(b * s.T * s.G * cfg.nSel, (b + 1) * s.T * s.G * cfg.nSel);
    let f: AttentionForward;
    let g: AttentionGrads;
    if (branch === 'cmp') {
      f = compressedForwardRef(q, k, v, shape, cfg);
      g = compressedBackwardRef(q, k, v, f, dO, shape, cfg);
    } else if (branch === 'sel') {
      f = selectedForwardRef(q, k, v, sel, shape, cfg);
      g = selectedBackwardRef(q, k, v, sel, f, dO, shape, cfg);
    } else {
      f = windowForwardRef(q, k, v, shape, cfg);
      g = windowBackwardRef(q, k, v, f, dO, shape, cfg);
    }
    ref.out.set(f.o, b * nq * s.dv);
    ref.lse.set(f.lse, b * s.H * s.T);
    ref.dq.set(g.dq, b * nq * s.dk);
    ref.dk.set(g.dK, b * nk * s.dk);
    ref.dv.set(g.dV, b * nk * s.dv);
  }
  return ref;
}

/** GPU vs reference at the stated tolerances: forward ≤ 1e-5, backward ≤ 1e-4 (rel RMS). */
export function expectMatches(g: BranchOutputs, r: BranchReference): void {
  expectClose('out', g.out, r.out, 1e-5);
  const gl = splitLse(g.lse);
  const rl = splitLse(r.lse);
  expect(gl.negInf, 'queries without keys (lse = −inf)').toEqual(rl.negInf);
  expectClose('lse', gl.finite, rl.finite, 1e-5);
  expectClose('dq', g.dq, r.dq, 1e-4, r.floor.dq);
  expectClose('dK', g.dk, r.dk, 1e-4, r.floor.dk);
  expectClose('dV', g.dv, r.dv, 1e-4);
}

/** Splits lse into its finite entries and the positions of −inf (a query without keys). */
export function splitLse(lse: ArrayLike<number>): { finite: number[]; negInf: number[] } {
  const finite: number[] = [];
  const negInf: number[] = [];
  for (let i = 0; i < lse.length; i++) {
    if (lse[i] === -Infinity) negInf.push(i);
    else finite.push(lse[i]);
  }
  return { finite, negInf };
}

export const sameBits = (a: Float32Array, b: Float32Array): boolean => {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.every((w, i) => w === y[i]);
};
