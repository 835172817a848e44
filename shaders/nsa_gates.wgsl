// NSA gates and the gated mix of the three branches (docs/nsa-spec.md "Gates and output").
// Rows r = b·T + t; gates and logits are [rows, 3H] with column 3i + c, c ∈ (cmp, sel, win);
// branch outputs and the mix are [rows, H, dv].
//   gateForward        gates = sigmoid(logits + bias), or the ablation's constants
//                      (constCmp, constSel, constWin) under MODE_CONST
//   combineForward     out = g_cmp·oCmp + g_sel·oSel + g_win·oWin
//   combineBackwardDo  dCmp, dSel, dWin = g_c·dout for each branch (overwrite)
//   combineBackwardDg  gateGrad[r, 3i+c] = ⟨dout, O_c⟩·g(1 − g), the gradient wrt the logits
//                      (overwrite; 0 for constant gates), or with MODE_GATES the gradient wrt the
//                      gate values, ⟨dout, O_c⟩ (overwrite)
//   colSum             dbias[col] += Σ_r dlogits[r, col], rows in a fixed order, then a fixed tree
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
  var g = sigmoid(logits[x] + bias[x % (3u * P.H)]);
  if (P.mode == MODE_CONST) { g = select(select(P.constWin, P.constSel, c == 1u), P.constCmp, c == 0u); }
  gates[x] = g;
}

@compute @workgroup_size(WG)
fn combineForward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let ri = x / P.dv; // r·H + i
  out[x] = gates[3u * ri] * oCmp[x] + gates[3u * ri + 1u] * oSel[x] + gates[3u * ri + 2u] * oWin[x];
}

@compute @workgroup_size(WG)
fn combineBackwardDo(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let ri = x / P.dv;
  let d = dout[x];
  dCmp[x] = gates[3u * ri] * d;
  dSel[x] = gates[3u * ri + 1u] * d;
  dWin[x] = gates[3u * ri + 2u] * d;
}

// One invocation per (row, head) in workgroups of DG_WG (one warp): the rows·H items (12,288 for
// m7c-125m) in 256-wide workgroups left two thirds of an H100's SMs idle.
const DG_WG: u32 = 32u;

@compute @workgroup_size(DG_WG)
fn combineBackwardDg(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let ri = gid.x + gid.y * nwg.x * DG_WG;
  if (ri >= P.total) { return; }
  var dc = 0.0;
  var ds = 0.0;
  var dw = 0.0;
  for (var e = 0u; e < P.dv; e++) {
    let x = ri * P.dv + e;
    let d = dout[x];
    dc += d * oCmp[x];
    ds += d * oSel[x];
    dw += d * oWin[x];
  }
  let g = vec3<f32>(gates[3u * ri], gates[3u * ri + 1u], gates[3u * ri + 2u]);
  var dz = vec3<f32>(dc, ds, dw) * g * (1.0 - g);
  if (P.mode == MODE_CONST) { dz = vec3<f32>(0.0); } // constant gates: no gradient reaches the logits
  if (P.mode == MODE_GATES) { dz = vec3<f32>(dc, ds, dw); }
  gateGrad[3u * ri] = dz.x;
  gateGrad[3u * ri + 1u] = dz.y;
  gateGrad[3u * ri + 2u] = dz.z;
}

// One workgroup per TC columns (cols = 3H); lane y walks rows y, y + TL, … in order, then a tree.
@compute @workgroup_size(TC, TL)
fn colSum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let cols = 3u * P.H;
  let c = wid.x * TC + lid.x;
  var acc = 0.0;
  if (c < cols) {
    for (var r = lid.y; r < P.rows; r += TL) { acc += dlogits[r * cols + c]; }
  }
  red[lid.y * TC + lid.x] = acc;
  for (var stride = TL / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid.y < stride) { red[lid.y * TC + lid.x] += red[(lid.y + stride) * TC + lid.x]; }
  }
  if (lid.y == 0u && c < cols) { dbias[c] += red[lid.x]; }
}
