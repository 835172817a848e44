// RMSNorm over rows of C: out = x · rstd · weight, rstd = 1 / sqrt(mean(x²) + eps), saved per row.
// forward and backwardDx: a workgroup of 256 handles 256/L rows with L lanes each; a lane strides
// over the row, then a fixed tree over the L lanes in workgroup memory. L is a power of two chosen
// by the wrapper (32 on GPUs: a row segment per warp; 4 on SwiftShader, which pays per lane and
// barrier). backwardDweight: one workgroup per tile of TC columns; its TL lanes walk the rows
// l, l + TL, … in order, then a fixed tree over lanes. No atomics: same bits every run.
// Bindings are shared by the entry points (one declaration per slot):
//   forward:         x, w = weight, rstd (written), y = out
//   backwardDx:      x, w = weight, rstd, y = dout, dx
//   backwardDweight: x, w = dweight (+=), rstd, y = dout

override L: u32 = 32; // row kernels: lanes per row, a power of two ≤ 256
const TC: u32 = 8u; // dweight: columns per workgroup (8 floats: one 32-byte sector per row)
const TL: u32 = 32u; // dweight: row lanes per column; a power of two (TC · TL = 256)
var<workgroup> red: array<f32, 256>; // L × (256 / L), and TC × TL

// Sum of v over the L lanes of this row, in a fixed tree order; every lane gets the total.
// Called by the whole workgroup (barriers), out-of-range rows included.
fn rowSum(lid: vec3<u32>, v: f32) -> f32 {
  let slot = lid.y * L + lid.x;
  red[slot] = v;
  workgroupBarrier();
  for (var s = L / 2u; s > 0u; s >>= 1u) {
    if (lid.x < s) { red[slot] += red[slot + s]; }
    workgroupBarrier();
  }
  return red[lid.y * L];
}

@compute @workgroup_size(L, 256 / L)
fn forward(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
) {
  let row = (wid.x + wid.y * nwg.x) * (256u / L) + lid.y;
  let n = select(0u, P.C, row < P.rows); // lanes of rows past the end only join the barriers
  let base = row * P.C;
  var ss = 0.0;
  for (var c = lid.x; c < n; c += L) {
    let v = x[base + c];
    ss += v * v;
  }
  let r = 1.0 / sqrt(rowSum(lid, ss) / f32(P.C) + P.eps);
  if (n == 0u) { return; }
  if (lid.x == 0u) { rstd[row] = r; }
  for (var c = lid.x; c < n; c += L) {
    y[base + c] = x[base + c] * r * w[c];
  }
}

// dx = rstd · (dout ⊙ w − x · rstd² · mean(dout ⊙ w ⊙ x)).
@compute @workgroup_size(L, 256 / L)
fn backwardDx(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
) {
  let row = (wid.x + wid.y * nwg.x) * (256u / L) + lid.y;
  let n = select(0u, P.C, row < P.rows);
  let base = row * P.C;
  var dot = 0.0;
  for (var c = lid.x; c < n; c += L) {
    dot += y[base + c] * w[c] * x[base + c];
  }
  let total = rowSum(lid, dot);
  if (n == 0u) { return; }
  let r = rstd[row];
  let k = total * r * r / f32(P.C);
  for (var c = lid.x; c < n; c += L) {
    let i = base + c;
    let g = r * (y[i] * w[c] - x[i] * k);
    if (P.accumulate != 0u) {
      dx[i] = dx[i] + g;
    } else {
      dx[i] = g;
    }
  }
}

// dweight[c] += Σ_rows dout[r, c] · x[r, c] · rstd[r].
@compute @workgroup_size(TC, TL)
fn backwardDweight(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let c = wid.x * TC + lid.x;
  var acc = 0.0;
  if (c < P.C) {
    for (var r = lid.y; r < P.rows; r += TL) {
      let i = r * P.C + c;
      acc += y[i] * x[i] * rstd[r];
    }
  }
  let slot = lid.y * TC + lid.x;
  red[slot] = acc;
  workgroupBarrier();
  for (var s = TL / 2u; s > 0u; s >>= 1u) {
    if (lid.y < s) { red[slot] += red[slot + s * TC]; }
    workgroupBarrier();
  }
  if (lid.y == 0u && c < P.C) { w[c] = w[c] + red[lid.x]; }
}
