// Dense causal attention, backward part 1: dQ per query row, and delta = rowsum(dO ∘ O) for part 2.
// Same row mapping and K/V staging as attention_fwd.wgsl: a workgroup owns WG rows r = t·hpg + j of
// one (batch b, group g); one thread per row loops over the keys s ≤ t in ascending order:
//   P = exp(q·k_s/√DK − lse),  dS = P (dO·v_s − delta),  dQ = Σ_s dS k_s / √DK.
// Each output element is written by exactly one thread in a fixed order: no atomics, same bits.

struct Params {
  T: u32,
  H: u32,
  G: u32,
  hpg: u32,          // heads per group, H / G
  scaleLog2e: f32,   // log2(e) / sqrt(DK)
  scale: f32,        // 1 / sqrt(DK)
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> q: array<f32>;
@group(0) @binding(2) var<storage, read_write> k: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;
@group(0) @binding(6) var<storage, read_write> dout: array<f32>;
@group(0) @binding(7) var<storage, read_write> delta: array<f32>;
@group(0) @binding(8) var<storage, read_write> gradQ: array<f32>;

override DK: u32;
override DV: u32;
override DK4: u32;   // ceil(DK / 4)
override DV4: u32;   // ceil(DV / 4)
override BK: u32;    // keys per staged tile; BK·(DK4+DV4)·16 bytes ≤ 16 KiB

const WG: u32 = 64u;
const MAX4: u32 = 32u;   // DK, DV ≤ 128
const LOG2E: f32 = 1.4426950408889634;

var<workgroup> ks: array<vec4<f32>, BK * DK4>;
var<workgroup> vs: array<vec4<f32>, BK * DV4>;

fn loadQ4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = q[base + d + c]; } }
  return r;
}

fn loadK4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = k[base + d + c]; } }
  return r;
}

fn loadV4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = v[base + d + c]; } }
  return r;
}

fn loadDout4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = dout[base + d + c]; } }
  return r;
}

@compute @workgroup_size(WG)
fn backwardDq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let T = P.T;
  let hpg = P.hpg;
  let g = wid.y;
  let b = wid.z;
  let row = wid.x * WG + lid;
  let live = row < T * hpg;
  let t = min(row / hpg, T - 1u);                       // dead rows shadow the last query, never write
  let head = g * hpg + row % hpg;
  let tLast = min((wid.x * WG + WG - 1u) / hpg, T - 1u);  // last query of the workgroup (uniform)

  var qr: array<vec4<f32>, MAX4>;
  var dor: array<vec4<f32>, MAX4>;
  var dq: array<vec4<f32>, MAX4>;
  let qBase = ((b * T + t) * P.H + head) * DK;
  let oBase = ((b * T + t) * P.H + head) * DV;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(qBase, i * 4u); }
  for (var i = 0u; i < DV4; i++) { dor[i] = loadDout4(oBase, i * 4u); }
  var dl = 0.0;
  for (var d = 0u; d < DV; d++) { dl = fma(dout[oBase + d], out[oBase + d], dl); }
  let lrow = (b * P.H + head) * T + t;
  let lse2 = lse[lrow] * LOG2E;
  if (live) { delta[lrow] = dl; }

  let nTiles = tLast / BK + 1u;
  for (var tile = 0u; tile < nTiles; tile++) {
    let s0 = tile * BK;
    workgroupBarrier();   // the previous tile is consumed
    for (var i = lid; i < BK * DK4; i += WG) {
      let key = s0 + i / DK4;
      var x = vec4<f32>(0.0);
      if (key < T) { x = loadK4(((b * T + key) * P.G + g) * DK, (i % DK4) * 4u); }
      ks[i] = x;
    }
    for (var i = lid; i < BK * DV4; i += WG) {
      let key = s0 + i / DV4;
      var x = vec4<f32>(0.0);
      if (key < T) { x = loadV4(((b * T + key) * P.G + g) * DV, (i % DV4) * 4u); }
      vs[i] = x;
    }
    workgroupBarrier();

    let nKeys = min(BK, tLast + 1u - s0);
    for (var kk = 0u; kk < nKeys; kk++) {
      if (s0 + kk > t) { break; }   // keys ascend: the rest are in this row's future
      var a = vec4<f32>(0.0);
      for (var i = 0u; i < DK4; i++) { a = fma(qr[i], ks[kk * DK4 + i], a); }
      var e = vec4<f32>(0.0);
      for (var i = 0u; i < DV4; i++) { e = fma(dor[i], vs[kk * DV4 + i], e); }
      let p = exp2((a.x + a.y + a.z + a.w) * P.scaleLog2e - lse2);
      let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - dl));
      for (var i = 0u; i < DK4; i++) { dq[i] = fma(ds, ks[kk * DK4 + i], dq[i]); }
    }
  }

  if (!live) { return; }
  for (var i = 0u; i < DK4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DK) { gradQ[qBase + d] = dq[i][c] * P.scale; }
    }
  }
}
