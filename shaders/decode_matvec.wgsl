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
  for (var r = 0u; r < rows; r++) {
    var s = 0.0;
    for (var k = k0; k < k1; k++) {
      let w = select(b[k * P.N + n], b[n * P.K + k], trans);
      s = fma(a[r * P.K + k], w, s);
    }
    c[(chunk * rows + r) * P.N + n] = s;
  }
}

@compute @workgroup_size(WG)
fn matvecCombine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.total) { return; }
  _ = st[0];
  var s = 0.0;
  for (var chunk = 0u; chunk < P.splits; chunk++) { s += a[chunk * P.total + i]; }
  if ((P.flags & 2u) != 0u) { b[i] += s; } else { b[i] = s; }
}
