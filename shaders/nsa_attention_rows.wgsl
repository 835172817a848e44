// NSA selected attention, query-centric part shared by the forward and the dQ pass (prepended after
// attention_common.wgsl and nsa_attention_common.wgsl). One workgroup owns one (batch b, query t,
// group g) — wid = (t, g, b) — and all h = hpg heads of the group, so every selected key is read
// once for the whole group (the paper's group-centric design; each query selects its own blocks,
// so unlike the compressed and window branches, nsa_attention_tiled_*.wgsl, queries share no
// tiles). The key list of (b, t, g) is enumerated in ascending order, n = 0 .. nk−1, and staged BK
// keys at a time into workgroup memory; thread (row i, lane) = (lid / NL, lid % NL) handles the
// keys kk ≡ lane (mod NL) of each tile with its own running state in registers, and the NL lanes of
// a row are merged at the end in lane order (same bits on every run). The pass declares `sel` (the selection, for stageSel).

override KS: u32;     // odd ≥ DK4: vec4 stride of a staged key (lanes read distinct banks)
override VS: u32;     // odd ≥ DV4: vec4 stride of a staged value
override NL: u32;     // lanes per head row, hpg · NL ≤ WG
override BK: u32;     // keys per tile
override CW: u32;     // vec4 columns per lane-merge round (see the wrapper's tiling)
override NSEL: u32;   // ≥ nSel, a power of two (size of the staged selection row)

const WG: u32 = 64u;

// Keys at kk·KS, values at BK·KS + kk·VS; after the key loop, the lane-merge scratch.
var<workgroup> kv: array<vec4<f32>, BK * (KS + VS)>;
var<workgroup> selRow: array<i32, NSEL>;   // sel entry points stage the selection of (b, t, g) here
var<workgroup> nKeys: u32;

struct Lane {
  ir: u32,     // head row within the group; threads past the hpg rows shadow the last one
  lane: u32,
  live: bool,  // a real row: only live threads write
  head: u32,   // g·hpg + ir
}

// The row and lane of thread lid in group g.
fn laneOf(g: u32, lid: u32) -> Lane {
  let i = lid / NL;
  let ir = min(i, P.hpg - 1u);
  return Lane(ir, lid % NL, i < P.hpg, g * P.hpg + ir);
}

// Stages the selection row of (b, t, g) in selRow (sel entry points, before uniformKeyCount).
fn stageSel(b: u32, t: u32, g: u32, lid: u32) {
  for (var m = lid; m < P.nSel; m += WG) { selRow[m] = sel[((b * P.T + t) * P.G + g) * P.nSel + m]; }
  workgroupBarrier();
}

// Number of keys of query t: |selected positions ≤ t|.
fn keyCount(t: u32) -> u32 {
  var n = 0u;
  for (var m = 0u; m < P.nSel; m++) {
    let j = selRow[m];
    if (j >= 0 && u32(j) * P.lSel <= t) { n += min(P.lSel, t + 1u - u32(j) * P.lSel); }
  }
  return n;
}

// Position of the n-th key of query t, ascending in n. This relies on a valid selection (ascending
// candidates, −1 padded): every selected block but the one holding t is full, so key n lies in the
// (n / lSel)-th selected block.
fn keyAt(t: u32, nk: u32, n: u32) -> u32 {
  return u32(selRow[n / P.lSel]) * P.lSel + n % P.lSel;
}

// The key count of the workgroup's query, as a uniform value (loop bound around barriers).
fn uniformKeyCount(t: u32, lid: u32) -> u32 {
  if (lid == 0u) { nKeys = keyCount(t); }
  return workgroupUniformLoad(&nKeys);
}

// Stages keys n0 .. n0+BK−1 of query t (zeros past nk), once the previous tile is consumed; all of
// the workgroup calls it.
fn loadTile(b: u32, t: u32, g: u32, nk: u32, n0: u32, lid: u32) {
  workgroupBarrier();
  for (var x = lid; x < BK * DK4; x += WG) {
    let kk = x / DK4;
    var r = vec4<f32>(0.0);
    if (n0 + kk < nk) { r = loadK4(((b * P.S + keyAt(t, nk, n0 + kk)) * P.G + g) * DK, (x % DK4) * 4u); }
    kv[kk * KS + x % DK4] = r;
  }
  for (var x = lid; x < BK * DV4; x += WG) {
    let kk = x / DV4;
    var r = vec4<f32>(0.0);
    if (n0 + kk < nk) { r = loadV4(((b * P.S + keyAt(t, nk, n0 + kk)) * P.G + g) * DV, (x % DV4) * 4u); }
    kv[BK * KS + kk * VS + x % DV4] = r;
  }
  workgroupBarrier();
}
