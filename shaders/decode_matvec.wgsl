// GPU decode, the matrix-vector products split over the inner dimension (after decode_common.wgsl):
// at decode a projection has one row per sequence, so one invocation per output (decode_rows.wgsl's
// matvec) gives N / 64 workgroups — 2 for a 128-wide key projection, 12 for the MLP's down
// projection — each walking all K. Here the K inputs are cut into P.splits chunks of
// ceil(K / splits) (the last shorter):
//   matvecPart     one workgroup per (64-output tile, chunk); lane n sums a[r, k]·W[k, n] over the
//                  chunk's k in ascending order, for every row r, into part[(chunk·rows + r)·N + n]
//                  (W = b, stored [K, N]; flag 1: stored [N, K]).
//   matvecCombine  one invocation per output: out[r, n] (+)= Σ over the chunks in ascending order
//                  (flag 2: add to out, the residual stream).
// Fixed orders throughout: same inputs, same bits. The float64 twin is src/reference/decode-matvec.ts.
// Bindings: matvecPart a = x [rows, K], b = W, c = part [splits, rows, N]; matvecCombine a = part,
// b = out [rows, N]. P.total = rows·N.
// A group (P.members > 0): several products of the same x in one part + combine (a layer's q, K/V
// and gate projections from one normed input). Their outputs are numbered one after another, N =
// Σ N_j; member j's table, four words at st[P.tab + 4j]: its first output, N_j, where its W [K, N_j]
// starts in b and where its out [rows, N_j] starts in the combine's b (floats). The partials keep
// the [splits, rows, N] layout; each output's sum and order are those of its own product.
// Flag 4 (a group of two products of N_0 outputs each, the MLP's w1 and w3): the combine writes
// b[r, n] = silu(y0[r, n]) · y1[r, n] instead, the SwiGLU of the two sums (swiglu.wgsl's forward,
// the same arithmetic), for the rows·N_0 outputs.

// The group member that output n of the concatenation belongs to (the last one starting at ≤ n).
fn member(n: u32) -> u32 {
  var j = 0u;
  for (var m = 1u; m < P.members; m++) { if (st[P.tab + 4u * m] <= n) { j = m; } }
  return j;
}

@compute @workgroup_size(WG)
fn matvecPart(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let tiles = (P.N + WG - 1u) / WG;
  let i = wid.x + wid.y * nwg.x;
  if (i >= tiles * P.splits) { return; }
  let n = (i % tiles) * WG + lane;
  let chunk = i / tiles;
  if (n >= P.N) { return; }
  _ = st[0]; // bound in every entry point (one binding list per kernel); the products do not need t
  let rows = P.total / P.N;
  let len = (P.K + P.splits - 1u) / P.splits;
  let k0 = min(P.K, chunk * len);
  let k1 = min(P.K, k0 + len);
  let trans = (P.flags & 1u) != 0u;
  // One product: W [K, N] (or [N, K]) from 0; in a group, member j's W [K, N_j] from its offset.
  var nw = n;
  var wN = P.N;
  var w0 = 0u;
  if (P.members > 0u) {
    let e = P.tab + 4u * member(n);
    nw = n - st[e];
    wN = st[e + 1u];
    w0 = st[e + 2u];
  }
  for (var r = 0u; r < rows; r++) {
    var s = 0.0;
    for (var k = k0; k < k1; k++) {
      let w = select(b[w0 + k * wN + nw], b[n * P.K + k], trans);
      s = fma(a[r * P.K + k], w, s);
    }
    c[(chunk * rows + r) * P.N + n] = s;
  }
}

// σ(v) as swiglu.wgsl computes it.
fn sigmoidGate(v: f32) -> f32 {
  let e = exp(-abs(v));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, v >= 0.0);
}

@compute @workgroup_size(WG)
fn matvecCombine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  _ = st[0];
  if ((P.flags & 4u) != 0u) {
    let half = st[P.tab + 1u];
    if (i >= P.total / 2u) { return; }
    let at = (i / half) * P.N + i % half;
    var y0 = 0.0;
    var y1 = 0.0;
    for (var chunk = 0u; chunk < P.splits; chunk++) {
      y0 += a[chunk * P.total + at];
      y1 += a[chunk * P.total + at + half];
    }
    b[i] = y0 * sigmoidGate(y0) * y1;
    return;
  }
  if (i >= P.total) { return; }
  var s = 0.0;
  for (var chunk = 0u; chunk < P.splits; chunk++) { s += a[chunk * P.total + i]; }
  // In a group, output (r, n) goes to row r of its member's out: out_j + r·N_j + (n − first_j).
  var o = i;
  if (P.members > 0u) {
    let n = i % P.N;
    let e = P.tab + 4u * member(n);
    o = st[e + 3u] + (i / P.N) * st[e + 1u] + n - st[e];
  }
  if ((P.flags & 2u) != 0u) { b[o] += s; } else { b[o] = s; }
}
