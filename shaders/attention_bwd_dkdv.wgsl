// Dense causal attention, backward part 2: dK and dV per key, key-outer (runs after the dQ pass,
// which wrote delta = rowsum(dO ∘ O)). A workgroup owns KB = WG/NS consecutive keys of one (batch b,
// group g); NS threads share a key, each holding a 1/NS slice of its k, v, dK and dV columns (fewer
// registers, NS× the threads). The query rows r = t·hpg + j of the group (t ≥ first key, heads of
// the group innermost) are staged BQ at a time in workgroup memory; per tile:
//   1. each thread writes its partial q·k and dO·v over its column slice, for every staged row;
//   2. each thread sums the NS partials of its key in a fixed order (so the NS threads agree bit
//      for bit), forms P = exp(q·k/√DK − lse) (0 where t < s) and dS = P (dO·v − delta), and
//      accumulates dV += P dO, dK += dS q on its slice.
// Rows are visited in one fixed order and every output element has one writer: no atomics.

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
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read_write> dout: array<f32>;
@group(0) @binding(6) var<storage, read_write> delta: array<f32>;
@group(0) @binding(7) var<storage, read_write> gradK: array<f32>;
@group(0) @binding(8) var<storage, read_write> gradV: array<f32>;

override DK: u32;
override DV: u32;
override DK4: u32;   // ceil(DK / 4)
override DV4: u32;   // ceil(DV / 4)
override NS: u32;    // threads per key: 1, 2 or 4 (divides WG)
override KC4: u32;   // vec4 columns of k per thread, ceil(DK4 / NS) ≤ CMAX
override VC4: u32;   // vec4 columns of v per thread, ceil(DV4 / NS) ≤ CMAX
override BQ: u32;    // query rows per staged tile (see the 16 KiB budget in the wrapper)

const WG: u32 = 64u;
const CMAX: u32 = 8u;
const LOG2E: f32 = 1.4426950408889634;

// Staged rows, stride NS·KC4 (resp. NS·VC4) vec4 ≥ DK4, zero-padded so every slice reads in bounds.
var<workgroup> qs: array<vec4<f32>, BQ * NS * KC4>;
var<workgroup> dos: array<vec4<f32>, BQ * NS * VC4>;
var<workgroup> rowLse: array<f32, BQ>;     // lse · log2(e)
var<workgroup> rowDelta: array<f32, BQ>;
var<workgroup> partS: array<f32, BQ * WG>;   // [slice][row][key] partial q·k
var<workgroup> partD: array<f32, BQ * WG>;   // [slice][row][key] partial dO·v

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
fn backwardDkDv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let T = P.T;
  let hpg = P.hpg;
  let g = wid.y;
  let b = wid.z;
  let KB = WG / NS;
  let kl = lid % KB;   // key within the workgroup
  let sl = lid / KB;   // column slice
  let s = wid.x * KB + kl;
  let live = s < T;
  let sKey = min(s, T - 1u);   // dead threads shadow the last key, never write
  let QS = NS * KC4;
  let VS = NS * VC4;

  var kr: array<vec4<f32>, CMAX>;
  var vr: array<vec4<f32>, CMAX>;
  var dk: array<vec4<f32>, CMAX>;
  var dv: array<vec4<f32>, CMAX>;
  let kBase = ((b * T + sKey) * P.G + g) * DK;
  let vBase = ((b * T + sKey) * P.G + g) * DV;
  for (var i = 0u; i < KC4; i++) {
    let col = sl * KC4 + i;
    if (col < DK4) { kr[i] = loadK4(kBase, col * 4u); }
  }
  for (var i = 0u; i < VC4; i++) {
    let col = sl * VC4 + i;
    if (col < DV4) { vr[i] = loadV4(vBase, col * 4u); }
  }

  let rows = T * hpg;
  for (var r0 = wid.x * KB * hpg; r0 < rows; r0 += BQ) {
    workgroupBarrier();   // the previous tile is consumed
    for (var i = lid; i < BQ * QS; i += WG) {
      let rr = r0 + i / QS;
      let col = i % QS;
      var x = vec4<f32>(0.0);
      if (rr < rows && col < DK4) { x = loadQ4(((b * T + rr / hpg) * P.H + g * hpg + rr % hpg) * DK, col * 4u); }
      qs[i] = x;
    }
    for (var i = lid; i < BQ * VS; i += WG) {
      let rr = r0 + i / VS;
      let col = i % VS;
      var x = vec4<f32>(0.0);
      if (rr < rows && col < DV4) { x = loadDout4(((b * T + rr / hpg) * P.H + g * hpg + rr % hpg) * DV, col * 4u); }
      dos[i] = x;
    }
    for (var i = lid; i < BQ; i += WG) {
      let rr = r0 + i;
      var z = 0.0;
      var dl = 0.0;
      if (rr < rows) {
        let lrow = (b * P.H + g * hpg + rr % hpg) * T + rr / hpg;
        z = lse[lrow] * LOG2E;
        dl = delta[lrow];
      }
      rowLse[i] = z;
      rowDelta[i] = dl;
    }
    workgroupBarrier();

    for (var r = 0u; r < BQ; r++) {
      var a = vec4<f32>(0.0);
      for (var i = 0u; i < KC4; i++) { a = fma(kr[i], qs[r * QS + sl * KC4 + i], a); }
      var e = vec4<f32>(0.0);
      for (var i = 0u; i < VC4; i++) { e = fma(vr[i], dos[r * VS + sl * VC4 + i], e); }
      partS[(sl * BQ + r) * KB + kl] = a.x + a.y + a.z + a.w;
      partD[(sl * BQ + r) * KB + kl] = e.x + e.y + e.z + e.w;
    }
    workgroupBarrier();

    for (var r = 0u; r < BQ; r++) {
      var sc = 0.0;
      var dp = 0.0;
      for (var j = 0u; j < NS; j++) {
        sc += partS[(j * BQ + r) * KB + kl];
        dp += partD[(j * BQ + r) * KB + kl];
      }
      let rr = r0 + r;
      let p = select(0.0, exp2(sc * P.scaleLog2e - rowLse[r]), rr < rows && rr / hpg >= s);
      let ds = vec4<f32>(p * (dp - rowDelta[r]));
      for (var i = 0u; i < KC4; i++) { dk[i] = fma(ds, qs[r * QS + sl * KC4 + i], dk[i]); }
      for (var i = 0u; i < VC4; i++) { dv[i] = fma(vec4<f32>(p), dos[r * VS + sl * VC4 + i], dv[i]); }
    }
  }

  if (!live) { return; }
  for (var i = 0u; i < KC4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = (sl * KC4 + i) * 4u + c;
      if (d < DK) { gradK[kBase + d] = dk[i][c] * P.scale; }
    }
  }
  for (var i = 0u; i < VC4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = (sl * VC4 + i) * 4u + c;
      if (d < DV) { gradV[vBase + d] = dv[i][c]; }
    }
  }
}
