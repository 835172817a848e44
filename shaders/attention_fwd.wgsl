// Dense causal attention with grouped-query heads, forward, flash style (online softmax).
// q [B,T,H,DK], k [B,T,G,DK], v [B,T,G,DV], out [B,T,H,DV], lse [B,H,T] (natural log).
// A workgroup owns WG rows of one (batch b, group g): row r = t·hpg + j is query t of head
// g·hpg + j, so the h heads of a group share every staged K/V tile. One thread per row keeps its
// q row and output accumulator in registers; K/V tiles of BK keys are staged in workgroup memory
// as vec4 (zero-padded past DK / DV). Scores are kept in log2 units (scale folded with log2 e).

struct Params {
  T: u32,
  H: u32,
  G: u32,
  hpg: u32,          // heads per group, H / G
  scaleLog2e: f32,   // log2(e) / sqrt(DK)
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> q: array<f32>;
@group(0) @binding(2) var<storage, read_write> k: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

override DK: u32;
override DV: u32;
override DK4: u32;   // ceil(DK / 4)
override DV4: u32;   // ceil(DV / 4)
override BK: u32;    // keys per staged tile, a multiple of CH; BK·(DK4+DV4)·16 bytes ≤ 16 KiB

const WG: u32 = 64u;     // rows per workgroup
const CH: u32 = 8u;      // keys per online-softmax rescale
const MAX4: u32 = 32u;   // DK, DV ≤ 128
const LN2: f32 = 0.6931471805599453;
// Finite "minus infinity": WGSL does not promise IEEE infinities.
const NEG: f32 = -1e30;

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

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
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
  var o: array<vec4<f32>, MAX4>;
  let qBase = ((b * T + t) * P.H + head) * DK;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(qBase, i * 4u); }
  var m = NEG;   // running max of the scores (log2 units)
  var l = 0.0;   // running Σ exp2(score − m)

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
    for (var c0 = 0u; c0 < nKeys; c0 += CH) {
      if (s0 + c0 > t) { break; }   // the rest of the tile is in this row's future
      var sc: array<f32, CH>;
      var mx = m;
      for (var c = 0u; c < CH; c++) {
        let kk = c0 + c;
        var acc = vec4<f32>(0.0);
        for (var i = 0u; i < DK4; i++) { acc = fma(qr[i], ks[kk * DK4 + i], acc); }
        let s = (acc.x + acc.y + acc.z + acc.w) * P.scaleLog2e;
        sc[c] = select(NEG, s, s0 + kk <= t);
        mx = max(mx, sc[c]);
      }
      let alpha = exp2(m - mx);
      l *= alpha;
      for (var i = 0u; i < DV4; i++) { o[i] *= alpha; }
      for (var c = 0u; c < CH; c++) {
        let kk = c0 + c;
        let p = select(0.0, exp2(sc[c] - mx), s0 + kk <= t);
        l += p;
        for (var i = 0u; i < DV4; i++) { o[i] = fma(vec4<f32>(p), vs[kk * DV4 + i], o[i]); }
      }
      m = mx;
    }
  }

  if (!live) { return; }
  let inv = 1.0 / l;
  let oBase = ((b * T + t) * P.H + head) * DV;
  for (var i = 0u; i < DV4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DV) { out[oBase + d] = o[i][c] * inv; }
    }
  }
  lse[(b * P.H + head) * T + t] = (m + log2(l)) * LN2;
}
