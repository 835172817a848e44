// C[M,N] (+)= op(A) · op(B): tiled, register-blocked matmul.
// op(A) is A stored [M,K], or A stored [K,M] when transposed; op(B) is B stored [K,N], or [N,K].
// All row-major.
//
// Tiling. A workgroup of WGX·WGY invocations computes a BM×BN tile of C (BM = 4·R·WGY,
// BN = 4·R·WGX). Each invocation owns R×R blocks of 4×4 outputs, block (i, j) at rows
// 4·(ty + i·WGY) and columns 4·(tx + j·WGX) of the tile, so neighbouring invocations touch
// neighbouring words of workgroup memory and of C. R is 2 (8×8 outputs per invocation, for GPUs)
// or 4 (16×16, for CPU emulation such as SwiftShader, where every load from memory is an emulated
// gather and the only lever is more arithmetic per load).
//
// K is walked in steps of TK. Each step stages op(A)[tile rows, TK] m-major (As, rows padded by
// one vec4 against bank conflicts) and op(B)[TK, tile cols] k-major (Bs) in workgroup memory,
// moving 4×4 blocks: four vec4 loads along the matrix's contiguous dimension, a register transpose
// when the stored orientation differs, four vec4 stores. The inner loop then reads 4×4 blocks as
// vec4s and accumulates each with one mat4x4 product; it has no branches or bounds checks, because
// out-of-range elements are staged as 0.
//
// Transposes, vec4 eligibility and accumulation are uniform flags (one pipeline serves every call;
// they only steer staging and the final store). Summation order is fixed: same inputs, same bits.
//
// Split over K (P.splits > 1, src/kernels/matmul.ts matmulDispatches): workgroup i computes tile
// i mod tiles over chunk s = i / tiles of K (k in [s·kChunk, (s+1)·kChunk), staged in TK steps
// from s·kChunk, k past the chunk staged as 0) and stores it at C[s·M·N + ...], C then being the
// partial-sum scratch; splitSum adds the chunks in ascending order into the real C. With one chunk
// (kChunk = K) the loop is the unsplit one, step for step.
//
// A and B are bound as vec4 arrays (the wrapper rounds those bindings up to 16 bytes). With
// VEC4_LOADS, rows that start on vec4 boundaries (row length a multiple of 4: FLAG_VEC_*) load one
// vec4 per access; otherwise element by element. C is a plain f32 array written element by element.
//
// CPU emulators (SwiftShader) execute both sides of every branch under lane masks, so staging picks
// orientations with select() and clamps indices instead of branching.

const FLAG_TRANS_A = 1u;
const FLAG_TRANS_B = 2u;
const FLAG_VEC_A = 4u;   // A's stored row length (K, or M when transposed) is a multiple of 4
const FLAG_VEC_B = 8u;   // B's stored row length (N, or K when transposed) is a multiple of 4
const FLAG_ACCUMULATE = 16u;

override WGX: u32 = 8;  // invocations along N
override WGY: u32 = 8;  // invocations along M
override R: u32 = 2;    // 4×4 blocks per invocation along each of M and N: 2 or 4
override TK: u32 = 16;  // K step, a multiple of 4
// Load aligned rows of A and B as vec4s. Off for CPU emulation: there a vec4 load costs four
// scalar ones, and since both sides of every branch run, having the branch would cost both.
override VEC4_LOADS: bool = true;

override BM: u32 = 4u * R * WGY;
override BN: u32 = 4u * R * WGX;
override SA: u32 = TK / 4u + 1u; // As row stride in vec4s: TK floats + 1 vec4 of padding
override SB: u32 = BN / 4u;      // Bs row stride in vec4s
var<workgroup> As: array<vec4<f32>, BM * SA>; // As[m·SA + k/4] = op(A)[m0 + m, k0 + k .. +3]
var<workgroup> Bs: array<vec4<f32>, TK * SB>; // Bs[k·SB + n/4] = op(B)[k0 + k, n0 + n .. +3]

fn has(flag: u32) -> bool { return (P.flags & flag) != 0u; }

// Elements c .. c+3 of row r of a stored rows×cols matrix (c % 4 == 0), zero outside it and at
// rows ≥ rowEnd or columns ≥ colEnd (the end of the chunk of K; else rows and cols). Indices are
// clamped into the matrix and the result masked, rather than branched on: CPU emulators run both
// sides of every branch. `aligned`: rows start on vec4 boundaries, so one vec4 load will do.
fn loadA4(r: u32, c: u32, rows: u32, cols: u32, rowEnd: u32, colEnd: u32, aligned: bool) -> vec4<f32> {
  let cc = vec4<u32>(c) + vec4<u32>(0u, 1u, 2u, 3u);
  let e = min(r, rows - 1u) * cols + min(cc, vec4<u32>(cols - 1u));
  var v: vec4<f32>;
  if (VEC4_LOADS && aligned) {
    v = A[e.x >> 2u];
  } else {
    v = vec4<f32>(A[e.x >> 2u][e.x & 3u], A[e.y >> 2u][e.y & 3u], A[e.z >> 2u][e.z & 3u], A[e.w >> 2u][e.w & 3u]);
  }
  return select(vec4<f32>(0.0), v, (cc < vec4<u32>(colEnd)) & vec4<bool>(r < rowEnd));
}

fn loadB4(r: u32, c: u32, rows: u32, cols: u32, rowEnd: u32, colEnd: u32, aligned: bool) -> vec4<f32> {
  let cc = vec4<u32>(c) + vec4<u32>(0u, 1u, 2u, 3u);
  let e = min(r, rows - 1u) * cols + min(cc, vec4<u32>(cols - 1u));
  var v: vec4<f32>;
  if (VEC4_LOADS && aligned) {
    v = B[e.x >> 2u];
  } else {
    v = vec4<f32>(B[e.x >> 2u][e.x & 3u], B[e.y >> 2u][e.y & 3u], B[e.z >> 2u][e.z & 3u], B[e.w >> 2u][e.w & 3u]);
  }
  return select(vec4<f32>(0.0), v, (cc < vec4<u32>(colEnd)) & vec4<bool>(r < rowEnd));
}

// Stages the K step at k0 of the tile at (m0, n0), in 4×4 blocks. A block is four vec4 loads along
// the stored matrix's rows, transposed in registers when the stored orientation is the other one
// (chosen with select, not a branch). Blocks are numbered with the stored matrix's contiguous
// dimension fastest, so neighbouring invocations load neighbouring vec4s.
fn stage(li: u32, m0: u32, n0: u32, k0: u32, kEnd: u32) {
  let nthreads = WGX * WGY;
  let kBlocks = TK / 4u;
  let mBlocks = BM / 4u;
  let nBlocks = BN / 4u;
  let tA = has(FLAG_TRANS_A);
  let vA = has(FLAG_VEC_A);
  for (var t = li; t < mBlocks * kBlocks; t += nthreads) {
    let mb = select(t / kBlocks, t % mBlocks, tA);
    let kb = select(t % kBlocks, t / mBlocks, tA);
    let m = m0 + 4u * mb;
    let k = k0 + 4u * kb;
    // Stored [M,K]: row m+i holds op(A)[m+i, k .. k+3]; stored [K,M]: row k+i holds op(A)[m .. m+3, k+i].
    let r = select(m, k, tA);
    let c = select(k, m, tA);
    let rows = select(P.M, P.K, tA);
    let cols = select(P.K, P.M, tA);
    let re = select(P.M, kEnd, tA);
    let ce = select(kEnd, P.M, tA);
    let l = mat4x4<f32>(loadA4(r, c, rows, cols, re, ce, vA), loadA4(r + 1u, c, rows, cols, re, ce, vA),
                        loadA4(r + 2u, c, rows, cols, re, ce, vA), loadA4(r + 3u, c, rows, cols, re, ce, vA));
    let lt = transpose(l);
    let p = 4u * mb * SA + kb;
    As[p] = select(l[0], lt[0], tA);
    As[p + SA] = select(l[1], lt[1], tA);
    As[p + 2u * SA] = select(l[2], lt[2], tA);
    As[p + 3u * SA] = select(l[3], lt[3], tA);
  }
  let tB = has(FLAG_TRANS_B);
  let vB = has(FLAG_VEC_B);
  for (var t = li; t < kBlocks * nBlocks; t += nthreads) {
    let kb = select(t / nBlocks, t % kBlocks, tB);
    let nb = select(t % nBlocks, t / kBlocks, tB);
    let k = k0 + 4u * kb;
    let n = n0 + 4u * nb;
    // Stored [K,N]: row k+i holds op(B)[k+i, n .. n+3]; stored [N,K]: row n+i holds op(B)[k .. k+3, n+i].
    let r = select(k, n, tB);
    let c = select(n, k, tB);
    let rows = select(P.K, P.N, tB);
    let cols = select(P.N, P.K, tB);
    let re = select(kEnd, P.N, tB);
    let ce = select(P.N, kEnd, tB);
    let l = mat4x4<f32>(loadB4(r, c, rows, cols, re, ce, vB), loadB4(r + 1u, c, rows, cols, re, ce, vB),
                        loadB4(r + 2u, c, rows, cols, re, ce, vB), loadB4(r + 3u, c, rows, cols, re, ce, vB));
    let lt = transpose(l);
    let p = 4u * kb * SB + nb;
    Bs[p] = select(l[0], lt[0], tB);
    Bs[p + SB] = select(l[1], lt[1], tB);
    Bs[p + 2u * SB] = select(l[2], lt[2], tB);
    Bs[p + 3u * SB] = select(l[3], lt[3], tB);
  }
}

// Column r = op(A)[4·rb + r, 4·kq .. 4·kq+3] of the staged tile.
fn aBlock(rb: u32, kq: u32) -> mat4x4<f32> {
  let p = 4u * rb * SA + kq;
  return mat4x4<f32>(As[p], As[p + SA], As[p + 2u * SA], As[p + 3u * SA]);
}

// Column c = op(B)[4·kq + c, 4·cb .. 4·cb+3] of the staged tile.
fn bBlock(cb: u32, kq: u32) -> mat4x4<f32> {
  let p = 4u * kq * SB + cb;
  return mat4x4<f32>(Bs[p], Bs[p + SB], Bs[p + 2u * SB], Bs[p + 3u * SB]);
}

// Writes a 4×4 block (column r = C row m + r, columns n .. n+3), clipped to M×N, at C[base + ...].
fn storeBlock(acc: mat4x4<f32>, base: u32, m: u32, n: u32) {
  let accumulate = has(FLAG_ACCUMULATE);
  for (var r = 0u; r < 4u; r++) {
    if (m + r >= P.M) { return; }
    for (var c = 0u; c < 4u; c++) {
      if (n + c >= P.N) { break; }
      let e = base + (m + r) * P.N + n + c;
      if (accumulate) { C[e] += acc[r][c]; } else { C[e] = acc[r][c]; }
    }
  }
}

@compute @workgroup_size(WGX, WGY)
fn matmul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  // Tiles are numbered row-major over (M, N), then by chunk of K; the grid may be folded into 2-D.
  let index = wid.x + wid.y * nwg.x;
  if (index >= P.tiles * P.splits) { return; } // uniform per workgroup: the barriers below stay in uniform flow
  let tile = index % P.tiles;
  let chunk = index / P.tiles;
  let kBegin = chunk * P.kChunk;
  let kEnd = min(P.K, kBegin + P.kChunk);
  let m0 = (tile / P.tilesN) * BM;
  let n0 = (tile % P.tilesN) * BN;
  let ty = lid.y;
  let tx = lid.x;

  // acc[4·i + j] is block (i, j): rows 4·(ty + i·WGY), columns 4·(tx + j·WGX); column r of a block
  // is one output row. Only constant indices, so the array lives in registers.
  var acc: array<mat4x4<f32>, 16>;
  for (var k0 = kBegin; k0 < kEnd; k0 += TK) {
    stage(li, m0, n0, k0, kEnd);
    workgroupBarrier();
    for (var kq = 0u; kq < TK / 4u; kq++) {
      // (Aᵀ block)·(Bᵀ block) summed over 4 k: acc(Cᵀ) += Bᵀ·Aᵀ, i.e. mat(b) * mat(a).
      let a0 = aBlock(ty, kq);
      let a1 = aBlock(ty + WGY, kq);
      let b0 = bBlock(tx, kq);
      let b1 = bBlock(tx + WGX, kq);
      acc[0] += b0 * a0;
      acc[1] += b1 * a0;
      acc[4] += b0 * a1;
      acc[5] += b1 * a1;
      if (R == 4u) {
        let a2 = aBlock(ty + 2u * WGY, kq);
        let a3 = aBlock(ty + 3u * WGY, kq);
        let b2 = bBlock(tx + 2u * WGX, kq);
        let b3 = bBlock(tx + 3u * WGX, kq);
        acc[2] += b2 * a0;
        acc[3] += b3 * a0;
        acc[6] += b2 * a1;
        acc[7] += b3 * a1;
        acc[8] += b0 * a2;
        acc[9] += b1 * a2;
        acc[10] += b2 * a2;
        acc[11] += b3 * a2;
        acc[12] += b0 * a3;
        acc[13] += b1 * a3;
        acc[14] += b2 * a3;
        acc[15] += b3 * a3;
      }
    }
    workgroupBarrier();
  }

  let base = chunk * P.M * P.N;
  let m = m0 + 4u * ty;
  let n = n0 + 4u * tx;
  let dm = 4u * WGY;
  let dn = 4u * WGX;
  storeBlock(acc[0], base, m, n);
  storeBlock(acc[1], base, m, n + dn);
  storeBlock(acc[4], base, m + dm, n);
  storeBlock(acc[5], base, m + dm, n + dn);
  if (R == 4u) {
    storeBlock(acc[2], base, m, n + 2u * dn);
    storeBlock(acc[3], base, m, n + 3u * dn);
    storeBlock(acc[6], base, m + dm, n + 2u * dn);
    storeBlock(acc[7], base, m + dm, n + 3u * dn);
    storeBlock(acc[8], base, m + 2u * dm, n);
    storeBlock(acc[9], base, m + 2u * dm, n + dn);
    storeBlock(acc[10], base, m + 2u * dm, n + 2u * dn);
    storeBlock(acc[11], base, m + 2u * dm, n + 3u * dn);
    storeBlock(acc[12], base, m + 3u * dm, n);
    storeBlock(acc[13], base, m + 3u * dm, n + dn);
    storeBlock(acc[14], base, m + 3u * dm, n + 2u * dn);
    storeBlock(acc[15], base, m + 3u * dm, n + 3u * dn);
  }
}

// The split's sum: Out[e] (+)= Σ over chunks s = 0, 1, ... of Parts[s·M·N + e], in that order, one
// invocation per output (Out is the product's C, Parts the matmul pass's scratch).
const SUM_WG: u32 = 64u;

@compute @workgroup_size(SUM_WG)
fn splitSum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let total = P.M * P.N;
  let e = gid.x + gid.y * nwg.x * SUM_WG;
  if (e >= total) { return; }
  var s = Parts[e];
  for (var chunk = 1u; chunk < P.splits; chunk++) { s += Parts[chunk * total + e]; }
  if (has(FLAG_ACCUMULATE)) { Out[e] += s; } else { Out[e] = s; }
}
