// NSA gates and the gated mix of the three branches (docs/nsa-spec.md "Gates and output").
// Rows r = b·T + t; gates and logits are [rows, 3H] with column 3i + c, c ∈ (cmp, sel, win);
// branch outputs and the mix are [rows, H, dv].
//   gateForward        gates = sigmoid(logits + bias), or the ablation's constants (MODE_CONST)
//   combineForward     out = g_cmp·O_cmp + g_sel·O_sel + g_win·O_win
//   combineBackwardDo  dO_c = g_c·dO for each branch (overwrite)
//   combineBackwardDg  dlogits[r, 3i+c] = ⟨dO, O_c⟩·g(1 − g) (overwrite; 0 for constant gates),
//                      or with MODE_GATES the gradient wrt the gate values, ⟨dO, O_c⟩ (overwrite)
//   colSum             dbias[col] += Σ_r dlogits[r, col], rows in a fixed order, then a fixed tree
// Bindings (one declaration per slot, meaning per entry point):
//   gateForward:       s1 = logits, s2 = bias, s3 = gates
//   combineForward:    s1 = gates, s2 = oCmp, s3 = oSel, s4 = oWin, s5 = out
//   combineBackwardDo: s1 = gates, s2 = dout, s3 = dCmp, s4 = dSel, s5 = dWin
//   combineBackwardDg: s1 = gates, s2 = dout, s3 = oCmp, s4 = oSel, s5 = oWin, s6 = dlogits (or dgates)
//   colSum:            s1 = dlogits, s2 = dbias
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 256u;
const MODE_CONST: u32 = 1u;
const MODE_GATES: u32 = 2u; // combineBackwardDg stops at the gate values (no sigmoid): the op API
const TC: u32 = 16u; // colSum: columns per workgroup
const TL: u32 = 16u; // colSum: row lanes per column; a power of two
var<workgroup> red: array<f32, 256>; // TC × TL

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

// exp of a non-positive argument only: no overflow for large |z|.
fn sigmoid(z: f32) -> f32 {
  if (z >= 0.0) { return 1.0 / (1.0 + exp(-z)); }
  let e = exp(z);
  return e / (1.0 + e);
}

@compute @workgroup_size(WG)
fn gateForward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let c = x % 3u;
  var g = sigmoid(s1[x] + s2[x % (3u * P.H)]);
  if (P.mode == MODE_CONST) { g = select(select(P.c2, P.c1, c == 1u), P.c0, c == 0u); }
  s3[x] = g;
}

@compute @workgroup_size(WG)
fn combineForward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let ri = x / P.dv; // r·H + i
  s5[x] = s1[3u * ri] * s2[x] + s1[3u * ri + 1u] * s3[x] + s1[3u * ri + 2u] * s4[x];
}

@compute @workgroup_size(WG)
fn combineBackwardDo(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let ri = x / P.dv;
  let d = s2[x];
  s3[x] = s1[3u * ri] * d;
  s4[x] = s1[3u * ri + 1u] * d;
  s5[x] = s1[3u * ri + 2u] * d;
}

@compute @workgroup_size(WG)
fn combineBackwardDg(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let ri = linear(gid, nwg);
  if (ri >= P.total) { return; }
  var dc = 0.0;
  var ds = 0.0;
  var dw = 0.0;
  for (var e = 0u; e < P.dv; e++) {
    let x = ri * P.dv + e;
    let d = s2[x];
    dc += d * s3[x];
    ds += d * s4[x];
    dw += d * s5[x];
  }
  let g = vec3<f32>(s1[3u * ri], s1[3u * ri + 1u], s1[3u * ri + 2u]);
  var dz = vec3<f32>(dc, ds, dw) * g * (1.0 - g);
  if (P.mode == MODE_CONST) { dz = vec3<f32>(0.0); } // constant gates: no gradient reaches the logits
  if (P.mode == MODE_GATES) { dz = vec3<f32>(dc, ds, dw); }
  s6[3u * ri] = dz.x;
  s6[3u * ri + 1u] = dz.y;
  s6[3u * ri + 2u] = dz.z;
}

// One workgroup per TC columns (cols = 3H); lane y walks rows y, y + TL, … in order, then a tree.
@compute @workgroup_size(TC, TL)
fn colSum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let cols = 3u * P.H;
  let c = wid.x * TC + lid.x;
  var acc = 0.0;
  if (c < cols) {
    for (var r = lid.y; r < P.rows; r += TL) { acc += s1[r * cols + c]; }
  }
  red[lid.y * TC + lid.x] = acc;
  for (var stride = TL / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid.y < stride) { red[lid.y * TC + lid.x] += red[(lid.y + stride) * TC + lid.x]; }
  }
  if (lid.y == 0u && c < cols) { s2[c] += red[lid.x]; }
}
