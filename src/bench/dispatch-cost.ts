// FLOPs and bytes of one recorded dispatch (src/gpu/recording-device.ts), from its kernel's shape:
// the uniform values and override constants it was built with, plus the step's batch size and the
// model's head sizes where the uniform does not carry them. The model, for every kernel:
//
// - FLOPs: a multiply-add counts 2, any other arithmetic operation (add, max, exp, sigmoid, divide)
//   counts 1, in the proportions the WGSL does it; integer index work counts 0. Matmul: 2·M·N·K.
//   Attention, per (query, key, head) pair the kernel visits: forward 2·dk (q·k) + 2·dv (p·v) + 3
//   (scale, max, exp); the backward's dQ 2·dk + 2·dv + 2·dk + 3; dK/dV 2·dk + 3 (the scores), + 2·dv
//   (dp) + 2·dk for dK, + 2·dv for dV (the `want` bits). Pairs per query row: dense t + 1; NSA compressed ncmp(t),
//   window min(w, t + 1), selected min(t + 1, (n − 1)·l′ + t mod l′ + 1) with forced local blocks
//   (the current block partial, n − 1 full ones), else min(t + 1, n·l′).
// - Bytes: compulsory traffic, float32 or 32-bit integers: each tensor the kernel reads is read once
//   and each it writes is written once (an accumulated output is read and written); re-reads (the
//   K/V a query block shares with the next, a weight tile shared by rows) are assumed to hit the
//   cache. So a kernel's roofline time is a lower bound.
// - Decode kernels run at position t (ctx.t, the last position of the cache by default): their work
//   depends on t through st[0], which no uniform holds.
//
// An unknown kernel is an error (a new kernel in a step needs its model here); the fast-tier test
// tests/bench/gpu-plan.test.ts builds every preset's steps and fails on one.
import type { RecordedDispatch } from '../gpu/recording-device';

export interface CostContext {
  /** Sequences of the step (training batch, or the decoder's batch). */
  B: number;
  dk: number;
  dv: number;
  /** Decode: the position being decoded. */
  t: number;
}

export interface DispatchCost {
  flops: number;
  bytes: number;
}

const W = 4; // bytes per float32 / u32 / i32

/** Compressed blocks visible to query t (block k ends at k·d + l − 1 ≤ t). */
export function ncmp(t: number, l: number, d: number): number {
  return t + 1 < l ? 0 : Math.floor((t + 1 - l) / d) + 1;
}

/** Keys of the selected blocks at positions ≤ t, as the header states. */
export function selectedKeys(t: number, lSel: number, nSel: number, forceLocal: number): number {
  return forceLocal >= 1 ? Math.min(t + 1, (nSel - 1) * lSel + (t % lSel) + 1) : Math.min(t + 1, nSel * lSel);
}

/** Σ over query positions t < T of f(t). */
function sumRows(T: number, f: (t: number) => number): number {
  let s = 0;
  for (let t = 0; t < T; t++) s += f(t);
  return s;
}

type U = Readonly<Record<string, number>>;

/** Keys a query at position t visits in NSA branch P.branch (0 cmp, 1 sel, 2 win; 3 dense: t + 1). */
function branchKeys(P: U, t: number): number {
  switch (P.branch) {
    case 0:
      return ncmp(t, P.l, P.d);
    case 1:
      return selectedKeys(t, P.lSel, P.nSel, P.forceLocal);
    case 2:
      return Math.min(P.w, t + 1);
    default:
      return t + 1;
  }
}

/** FLOPs per (query, key, head) pair of the attention kernels (header). */
const pairFwd = (dk: number, dv: number) => 2 * dk + 2 * dv + 3;
const pairDq = (dk: number, dv: number) => 4 * dk + 2 * dv + 3;
const pairDkDv = (dk: number, dv: number, want: number) => 2 * dk + 3 + (want & 1 ? 2 * dv + 2 * dk : 0) + (want & 2 ? 2 * dv : 0);

/** The cost of one dispatch; throws on a kernel this model does not know. */
export function dispatchCost(x: RecordedDispatch, ctx: CostContext): DispatchCost {
  const P = x.uniforms.P ?? {};
  const { B, dk, dv } = ctx;
  const key = `${x.kernel}.${x.entryPoint}`;
  switch (key) {
    case 'matmul.matmul': {
      // Split over K (splits > 1): each chunk's product stored to the partial sums, plain writes.
      const splits = P.splits ?? 1;
      const out = splits > 1 ? splits : P.flags & 16 ? 2 : 1;
      return { flops: 2 * P.M * P.N * P.K, bytes: W * (P.M * P.K + P.K * P.N + out * P.M * P.N) };
    }
    case 'matmul.splitSum': {
      const acc = P.flags & 16 ? 2 : 1;
      return { flops: (P.splits - 1) * P.M * P.N + (acc - 1) * P.M * P.N, bytes: W * (P.splits + acc) * P.M * P.N };
    }
    case 'embedding.forward':
      return { flops: 0, bytes: W * (P.N + 2 * P.N * P.C) };
    case 'embedding.backward':
      // Each token's gradient row added into its table row (read and written).
      return { flops: P.N * P.C, bytes: W * (2 * P.N + 3 * P.N * P.C) };
    case 'rmsnorm.forward':
      return { flops: 4 * P.rows * P.C, bytes: W * (2 * P.rows * P.C + P.C + P.rows) };
    case 'rmsnorm.backwardDx':
      return { flops: 8 * P.rows * P.C, bytes: W * ((P.accumulate ? 4 : 3) * P.rows * P.C + P.C + P.rows) };
    case 'rmsnorm.backwardDweight':
      return { flops: 3 * P.rows * P.C, bytes: W * (2 * P.rows * P.C + P.rows + 2 * P.C) };
    case 'residual.add':
      return { flops: P.n, bytes: W * 3 * P.n };
    case 'swiglu.forward':
      return { flops: 5 * P.n, bytes: W * 3 * P.n };
    case 'swiglu.backward':
      return { flops: 10 * P.n, bytes: W * 5 * P.n };
    case 'rope.applyInPlace':
      return { flops: 6 * P.pairs, bytes: W * 6 * P.pairs };
    case 'crossentropy.xent_inplace':
      // Max, exp and sum over each row, then the gradient written over the logits.
      return { flops: 5 * P.N * P.V, bytes: W * (2 * P.N * P.V + 2 * P.N) };
    case 'reduce.sum':
      return { flops: P.n, bytes: W * (P.n + 1) };
    case 'gradnorm.partial':
    case 'gradnorm.finalize':
      return { flops: 2 * P.n, bytes: W * (P.n + 1) };
    case 'adamw.adamw':
      // Reads param, grad, m, v; writes param, m, v.
      return { flops: 15 * P.n, bytes: W * 7 * P.n };
    case 'attention.forward.forward': {
      const pairs = B * P.H * sumRows(P.T, (t) => t + 1);
      return { flops: pairs * pairFwd(dk, dv), bytes: W * B * P.T * (P.H * (dk + 2 * dv) + P.G * (dk + dv) + P.H) };
    }
    case 'attention.backward.dq.backwardDq': {
      const pairs = B * P.H * sumRows(P.T, (t) => t + 1);
      return { flops: pairs * pairDq(dk, dv), bytes: W * B * P.T * (P.H * (2 * dk + 2 * dv) + P.G * (dk + dv) + 2 * P.H) };
    }
    case 'attention.backward.dkdv.backwardDkDvSplit': {
      // One workgroup per (key block, head): per-head parts of dK and dV, summed by sumHeads.
      const pairs = B * P.H * sumRows(P.T, (t) => t + 1);
      return {
        flops: pairs * pairDkDv(dk, dv, 3),
        bytes: W * B * P.T * (P.H * (dk + dv) + P.G * (dk + dv) + 2 * P.H + P.H * (dk + dv)),
      };
    }
    case 'attention.backward.sum_heads.sumHeads':
      return { flops: P.rows * P.hpg * (P.dk + P.dv), bytes: W * P.rows * (P.hpg + 1) * (P.dk + P.dv) };
    case 'nsa.forward.forwardSel':
    case 'nsa.forward.forwardSelCount':
    case 'nsa.tiled.forward.forward':
    case 'nsa.tiled.forward.forwardCount': {
      // The counting entry points (the model's training forward) also write one u32 per (b, t, g).
      const pairs = B * P.H * sumRows(P.T, (t) => branchKeys(P, t));
      const sel = P.branch === 1 ? P.T * P.G * P.nSel : 0;
      const counts = x.entryPoint.endsWith('Count') ? P.T * P.G : 0;
      return {
        flops: pairs * pairFwd(dk, dv),
        bytes: W * B * (P.T * (P.H * (dk + dv) + P.H) + P.S * P.G * (dk + dv) + sel + counts),
      };
    }
    case 'nsa.dq.backwardDqSel':
    case 'nsa.tiled.dq.backwardDq': {
      const pairs = B * P.H * sumRows(P.T, (t) => branchKeys(P, t));
      const sel = P.branch === 1 ? P.T * P.G * P.nSel : 0;
      const dq = (P.accumulate ? 2 : 1) * P.H * dk;
      return {
        flops: pairs * pairDq(dk, dv),
        bytes: W * B * (P.T * (P.H * (dk + dv) + 2 * P.H + dq) + P.S * P.G * (dk + dv) + sel),
      };
    }
    case 'nsa.dkdv.keyGradsSplit':
    case 'nsa.dkdv.keyGradsSelSplit':
    case 'nsa.dkdv.sel.keyGradsSelBothSplit': {
      // Per-head parts (per query piece: qSplits) of the key gradients the `want` bits ask for; the
      // query-side tensors once.
      const pairs = B * P.H * sumRows(P.T, (t) => branchKeys(P, t));
      const out = ((P.want & 1 ? dk : 0) + (P.want & 2 ? dv : 0)) * (P.qSplits ?? 1);
      const rev = P.branch === 1 ? P.T * P.G * P.nSel : 0;
      return {
        flops: pairs * pairDkDv(dk, dv, P.want),
        bytes: W * B * (P.T * (P.H * (dk + dv) + 2 * P.H) + P.S * P.G * (dk + dv) + P.S * P.H * out + rev),
      };
    }
    case 'nsa.delta.rowDelta':
      return { flops: 2 * P.n * dv, bytes: W * (2 * P.n * dv + P.n) };
    case 'nsa_compress.avgForward':
      // total = B·N·G·D outputs, each the mean of l rows.
      return { flops: P.total * P.l, bytes: W * (P.B * P.T * P.G * P.D + P.total) };
    case 'nsa_compress.avgBackward':
      // total = B·T·G·D inputs, each summing the blocks that cover it (about l / d).
      return { flops: P.total * Math.ceil(P.l / P.d), bytes: W * (P.total + P.B * P.N * P.G * P.D) };
    case 'nsa_select.scores':
    case 'nsa_select.scoresTiled': {
      // Per (b, t, g) row: each head's q·kc over the ncmp(t) visible blocks, their softmax, and the
      // selection-block scores; q and the compressed keys read once. The 64-lane row keeps each
      // s_k (up to SR_CH = 2,048 blocks); the tiled kernel recomputes it in each of its 3 passes.
      const hpg = P.H / P.G;
      const pairs = P.B * P.G * hpg * sumRows(P.T, (t) => ncmp(t, P.l, P.d));
      const dots = x.entryPoint === 'scoresTiled' ? 3 : 1;
      return {
        flops: pairs * (dots * 2 * P.dk + 5),
        bytes: W * P.B * (P.T * P.H * P.dk + P.N * P.G * P.dk + P.T * P.G * P.nB),
      };
    }
    case 'nsa_select.topN':
      return { flops: P.total * P.nB * P.nSel, bytes: W * P.total * (P.nB + P.nSel) };
    case 'nsa_reverse_index.countQueries':
    case 'nsa_reverse_index.fillQueries':
      return { flops: 0, bytes: W * B * P.T * P.G * P.nSel * 2 };
    case 'nsa_reverse_index.scanCounts':
      return { flops: 0, bytes: W * B * P.G * P.nB * 2 };
    case 'nsa_stats.resetAndGates':
      return { flops: P.nGates, bytes: W * (P.nGates + P.words) };
    case 'nsa_stats.checkSelection':
      // The selection and the three branches' per-row key counts.
      return { flops: 0, bytes: W * (P.rows * (P.nSel + 3) + P.words) };
    case 'nsa_gates.gateForward':
      // Sigmoid of each of the rows·3H logits plus the bias.
      return { flops: 5 * P.total, bytes: W * (2 * P.total + 3 * P.H) };
    case 'nsa_gates.combineForward':
      // total = rows·H·dv outputs, each three gated branch values.
      return { flops: 5 * P.total, bytes: W * (4 * P.total + 3 * P.rows * P.H) };
    case 'nsa_gates.combineBackwardDo':
      return { flops: 3 * P.total, bytes: W * (4 * P.total + 3 * P.rows * P.H) };
    case 'nsa_gates.combineBackwardDg':
      // total = rows·H: three dot products of dv and the sigmoid's derivative.
      return { flops: P.total * (6 * P.dv + 6), bytes: W * (4 * P.total * P.dv + 6 * P.total) };
    case 'nsa_gates.colSum':
      return { flops: 3 * P.rows * P.H, bytes: W * 3 * (P.rows + 1) * P.H };
    // ---- Decode (one new query per sequence at position ctx.t)
    case 'decode.rows.matvec': {
      const rows = P.total / P.N;
      const acc = P.flags & 2 ? 2 : 1;
      return { flops: 2 * rows * P.K * P.N, bytes: W * (rows * P.K + P.K * P.N + acc * rows * P.N) };
    }
    case 'decode.matvec.matvecPart': {
      // The chunks together read x and W once and write splits·rows·N partial sums.
      const rows = P.total / P.N;
      return { flops: 2 * rows * P.K * P.N, bytes: W * (rows * P.K + P.K * P.N + P.splits * rows * P.N) };
    }
    case 'decode.matvec.matvecCombine': {
      const acc = P.flags & 2 ? 2 : 1;
      return { flops: P.splits * P.total, bytes: W * (P.splits + acc) * P.total };
    }
    case 'decode.rows.ropeQ':
      return { flops: 6 * P.total, bytes: W * 6 * P.total };
    case 'decode.rows.appendKV':
      return { flops: 3 * P.B * P.G * P.dk, bytes: W * (2 * P.total + P.B * P.G * P.dk) };
    case 'decode.rows.compressAvg': {
      // Work only at a position that completes a block (the emission rule).
      const emits = ctx.t + 1 >= P.l && (ctx.t + 1 - P.l) % P.d === 0;
      return emits ? { flops: P.total * P.l, bytes: W * P.total * (P.l + 1) } : { flops: 0, bytes: 0 };
    }
    case 'decode.rows.compressHidden': {
      const emits = ctx.t + 1 >= P.l && (ctx.t + 1 - P.l) % P.d === 0;
      const inner = P.l * P.D;
      return emits
        ? { flops: P.total * (3 * inner + 8), bytes: W * (P.B * P.G * inner + inner + inner * P.Dh + P.Dh + P.total) }
        : { flops: 0, bytes: 0 };
    }
    case 'decode.rows.compressOut': {
      const emits = ctx.t + 1 >= P.l && (ctx.t + 1 - P.l) % P.d === 0;
      return emits ? { flops: 2 * P.total * P.Dh, bytes: W * (P.B * P.G * P.Dh + P.Dh * P.D + P.D + P.total) } : { flops: 0, bytes: 0 };
    }
    case 'decode.select.selectTopSerial': {
      // Each head's q·kc over ncmp(t) blocks, softmax, block scores and the top-n of nBmax.
      const n = ncmp(ctx.t, P.l, P.d);
      return {
        flops: P.B * P.H * n * (2 * P.dk + 5) + P.B * P.G * P.nBmax * P.nSel,
        bytes: W * (P.B * P.H * P.dk + P.B * n * P.G * P.dk + P.B * P.H * n + P.B * P.G * (P.nBmax + P.nSel)),
      };
    }
    case 'decode.selectSplit.selectDots': {
      // q·kc of every (b, head) over ncmp(t) blocks, s_k written to the scratch rows.
      const n = ncmp(ctx.t, P.l, P.d);
      return { flops: 2 * P.B * P.H * n * P.dk, bytes: W * (P.B * P.H * P.dk + P.B * n * P.G * P.dk + P.B * P.H * n) };
    }
    case 'decode.selectSplit.selectSoftmax': {
      // Max, exp and sum, exp and scale per (b, head, block); s_k read (three passes from the cache), p_k written.
      const n = ncmp(ctx.t, P.l, P.d);
      return { flops: 5 * P.B * P.H * n, bytes: W * 2 * P.B * P.H * n };
    }
    case 'decode.selectSplit.selectBlocks': {
      // Each block score sums p·overlap over the heads and the ≈ (l + l′) / d blocks overlapping it;
      // the top-n (nsa_topn_group.wgsl) takes its rem = min(nSel, nb) − #forced picks as the
      // workgroup: each a compare per candidate block and a 64-lane tree (63 compares), then one
      // pass over the nb blocks writes the selection. p_cmp read once, scores and selection written.
      const n = ncmp(ctx.t, P.l, P.d);
      const nb = Math.floor(ctx.t / P.lSel) + 1;
      const per = Math.ceil((P.l + P.lSel) / P.d);
      const forced = Math.min(P.forceLocal, nb) + (P.forceInit && P.forceLocal <= nb - 1 ? 1 : 0);
      const rem = Math.min(P.nSel, nb) - forced;
      return {
        flops: P.B * P.H * nb * per * 2 + P.B * P.G * (rem * (nb + 63) + nb),
        bytes: W * (P.B * P.H * n + P.B * P.G * (nb + P.nSel)),
      };
    }
    case 'decode.attend.attendPart': {
      // Each (b, head) over the branch's keys, split in chunks: scores, exp, p·v; the per-chunk
      // (max, sum, acc[dv]) partials written. The compressed branch reads p_cmp from the scratch.
      const n = branchKeys(P, ctx.t);
      const chunks = P.B * P.H * P.splits;
      const scores = P.branch === 0 ? 0 : n * (2 * P.dk + 3);
      const kBytes = P.branch === 0 ? 0 : P.dk;
      return {
        flops: P.B * P.H * (scores + 2 * n * P.dv),
        bytes: W * (P.B * P.H * (P.dk + n) + P.B * P.G * n * (kBytes + P.dv) + chunks * (P.dv + 3)),
      };
    }
    case 'decode.attend.attendCombine': {
      const chunks = P.B * P.H * P.splits;
      return { flops: chunks * (3 * P.dv + 4), bytes: W * (chunks * (P.dv + 3) + P.B * P.H * P.dv + P.B * P.G) };
    }
    default:
      throw new Error(`gpu:plan has no cost model for kernel ${key} (dispatch ${x.label}): add one to src/bench/dispatch-cost.ts`);
  }
}
