// C[M,N] (+)= op(A) · op(B): tiled, register-blocked matmul.
// op(A) is A stored [M,K], or A stored [K,M] when TRANS_A; op(B) is B stored [K,N], or [N,K] when
// TRANS_B. All row-major.
//
// A workgroup of WGX·WGY invocations computes a BM×BN tile of C (BM = 4·WGY, BN = 4·WGX); each
// invocation owns a 4×4 block. K is walked in steps of TK: the A and B tiles are copied into
// workgroup memory in their global orientation (so every global load is a contiguous vec4), then
// each invocation reads 4×4 sub-blocks as vec4s and accumulates them with one mat4x4 product.
//
// A and B are bound as vec4 arrays (the wrapper rounds those bindings up to 16 bytes). When a
// matrix's contiguous dimension is a multiple of 4 (VEC_A / VEC_B) rows start on vec4 boundaries
// and tiles load one vec4 per access; otherwise element by element. Out-of-range elements load as 0,
// so the inner loop has no bounds checks. C is a plain f32 array written element by element (a
// vector component store can be a read-modify-write of the whole vector on some backends).
// Summation order is fixed (k ascending within 4-wide chunks): same inputs give the same bits.

struct Params {
  M: u32,
  N: u32,
  K: u32,
  tilesN: u32, // tiles along N
  tiles: u32,  // tiles along M × tiles along N
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> A: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> B: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override VEC_A: bool = false; // A's row length (K, or M when TRANS_A) is a multiple of 4
override VEC_B: bool = false; // B's row length (N, or K when TRANS_B) is a multiple of 4
override ACCUMULATE: bool = false;
override WGX: u32 = 16; // invocations along N
override WGY: u32 = 16; // invocations along M
override TK: u32 = 16;  // K step per tile, a multiple of 4

// Tile storage, in vec4s. A k-contiguous tile (A not transposed, B transposed) has rows of TK
// floats padded by one vec4 to spread rows over memory banks; an m- or n-contiguous tile has TK
// rows of 4·WGY (4·WGX) floats. Each array is sized for the larger of its two layouts.
override A_LEN: u32 = 4u * WGY * (TK / 4u + 1u);
override B_LEN: u32 = 4u * WGX * (TK / 4u + 1u);
var<workgroup> As: array<vec4<f32>, A_LEN>;
var<workgroup> Bs: array<vec4<f32>, B_LEN>;

fn elemA(e: u32) -> f32 { return A[e >> 2u][e & 3u]; }
fn elemB(e: u32) -> f32 { return B[e >> 2u][e & 3u]; }

// Four consecutive elements of row r of a rows×cols matrix, starting at column c (c % 4 == 0);
// zero where outside the matrix.
fn loadA4(r: u32, c: u32, rows: u32, cols: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (r >= rows || c >= cols) { return v; }
  let e = r * cols + c;
  if (VEC_A) { return A[e >> 2u]; }
  v.x = elemA(e);
  if (c + 1u < cols) { v.y = elemA(e + 1u); }
  if (c + 2u < cols) { v.z = elemA(e + 2u); }
  if (c + 3u < cols) { v.w = elemA(e + 3u); }
  return v;
}

fn loadB4(r: u32, c: u32, rows: u32, cols: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (r >= rows || c >= cols) { return v; }
  let e = r * cols + c;
  if (VEC_B) { return B[e >> 2u]; }
  v.x = elemB(e);
  if (c + 1u < cols) { v.y = elemB(e + 1u); }
  if (c + 2u < cols) { v.z = elemB(e + 2u); }
  if (c + 3u < cols) { v.w = elemB(e + 3u); }
  return v;
}

@compute @workgroup_size(WGX, WGY)
fn matmul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  // Tiles are numbered row-major over (M, N); the grid may be folded into 2-D.
  let tile = wid.x + wid.y * nwg.x;
  if (tile >= P.tiles) { return; } // uniform per workgroup: barriers below stay in uniform flow
  let m0 = (tile / P.tilesN) * (4u * WGY);
  let n0 = (tile % P.tilesN) * (4u * WGX);
  let M = P.M;
  let N = P.N;
  let K = P.K;
  let nthreads = WGX * WGY;
  // Row strides of the tiles in workgroup memory, in vec4s.
  let sa = select(TK / 4u + 1u, WGY, TRANS_A);
  let sb = select(WGX, TK / 4u + 1u, TRANS_B);
  // Tile shapes in global orientation: rows × (vec4 columns).
  let aRows = select(4u * WGY, TK, TRANS_A);
  let aCols4 = select(TK / 4u, WGY, TRANS_A);
  let bRows = select(TK, 4u * WGX, TRANS_B);
  let bCols4 = select(WGX, TK / 4u, TRANS_B);

  var acc = mat4x4<f32>(); // column i = C row (m0 + 4·ty + i), columns 4·tx .. 4·tx+3
  for (var k0 = 0u; k0 < K; k0 += TK) {
    for (var t = li; t < aRows * aCols4; t += nthreads) {
      let r = t / aCols4;
      let q = t % aCols4;
      var v: vec4<f32>;
      if (TRANS_A) { v = loadA4(k0 + r, m0 + 4u * q, K, M); } else { v = loadA4(m0 + r, k0 + 4u * q, M, K); }
      As[r * sa + q] = v;
    }
    for (var t = li; t < bRows * bCols4; t += nthreads) {
      let r = t / bCols4;
      let q = t % bCols4;
      var v: vec4<f32>;
      if (TRANS_B) { v = loadB4(n0 + r, k0 + 4u * q, N, K); } else { v = loadB4(k0 + r, n0 + 4u * q, K, N); }
      Bs[r * sb + q] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk += 4u) {
      // at: column i = op(A)[m0 + 4·ty + i, kk .. kk+3]; bt: column c = op(B)[kk + c, 4·tx .. 4·tx+3].
      var at: mat4x4<f32>;
      if (TRANS_A) {
        let p = kk * sa + lid.y;
        at = transpose(mat4x4<f32>(As[p], As[p + sa], As[p + 2u * sa], As[p + 3u * sa]));
      } else {
        let p = 4u * lid.y * sa + kk / 4u;
        at = mat4x4<f32>(As[p], As[p + sa], As[p + 2u * sa], As[p + 3u * sa]);
      }
      var bt: mat4x4<f32>;
      if (TRANS_B) {
        let p = 4u * lid.x * sb + kk / 4u;
        bt = transpose(mat4x4<f32>(Bs[p], Bs[p + sb], Bs[p + 2u * sb], Bs[p + 3u * sb]));
      } else {
        let p = kk * sb + lid.x;
        bt = mat4x4<f32>(Bs[p], Bs[p + sb], Bs[p + 2u * sb], Bs[p + 3u * sb]);
      }
      acc += bt * at;
    }
    workgroupBarrier();
  }

  let n = n0 + 4u * lid.x;
  for (var i = 0u; i < 4u; i++) {
    let m = m0 + 4u * lid.y + i;
    if (m >= M) { break; }
    let row = acc[i];
    for (var j = 0u; j < 4u; j++) {
      if (n + j >= N) { break; }
      let e = m * N + n + j;
      if (ACCUMULATE) { C[e] += row[j]; } else { C[e] = row[j]; }
    }
  }
}
