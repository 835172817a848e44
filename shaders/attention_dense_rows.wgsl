// Query-tiled attention rows: the query-row part of dense attention's forward and dQ pass
// (attention_fwd.wgsl, attention_bwd_dq.wgsl) and of the NSA branches whose keys are one contiguous
// range per query (compressed, window: nsa_attention_tiled_*.wgsl), after attention_common.wgsl.
// A workgroup owns WG rows of one (batch b, group g): row r = t·hpg + j is query t of head
// g·hpg + j, so the h heads of a group and consecutive queries share every staged K/V tile. One
// thread per row keeps its row state in registers and loops over its keys in ascending order; K/V
// tiles of BK keys are staged in workgroup memory as vec4 (zero-padded past DK / DV). The uniform
// P has T, H, G, hpg and S (key rows per sequence: T, or the compressed rows).

override BK: u32;   // keys per staged tile, a multiple of 8; BK·(DK4+DV4)·16 bytes ≤ 16 KiB

const WG: u32 = 64u;   // rows per workgroup

var<workgroup> ks: array<vec4<f32>, BK * DK4>;
var<workgroup> vs: array<vec4<f32>, BK * DV4>;

struct QueryRow {
  b: u32,
  g: u32,
  t: u32,      // query position; dead rows (past T·hpg) shadow the last query and never write
  head: u32,
  live: bool,
  x: u32,      // (b·T + t)·H + head: the row of q, out and dout
  lrow: u32,   // (b·H + head)·T + t: the entry of lse and delta
}

// A range of key rows [lo, hi): those a row visits, or those its workgroup stages. (Two values, not
// one struct of four: a struct holding a row's own bounds is non-uniform as a whole, and the staged
// range bounds loops around barriers.)
struct KeyRange {
  lo: u32,
  hi: u32,
}

// Row lid of workgroup wid = (row block, g, b).
fn queryRow(wid: vec3<u32>, lid: u32) -> QueryRow {
  let row = wid.x * WG + lid;
  let b = wid.z;
  let g = wid.y;
  let t = min(row / P.hpg, P.T - 1u);
  let head = g * P.hpg + row % P.hpg;
  return QueryRow(b, g, t, head, row < P.T * P.hpg, (b * P.T + t) * P.H + head, (b * P.H + head) * P.T + t);
}

// The first and last query of workgroup wx: its key loop bounds (uniform, unlike the row's own).
fn firstQuery(wx: u32) -> u32 {
  return min(wx * WG / P.hpg, P.T - 1u);
}

fn lastQuery(wx: u32) -> u32 {
  return min((wx * WG + WG - 1u) / P.hpg, P.T - 1u);
}

// Stages keys s0 .. s0 + BK − 1 of (b, g) into ks, vs (zeros past S), once the previous tile is
// consumed; all of the workgroup calls it.
fn stageKeys(b: u32, g: u32, s0: u32, lid: u32) {
  workgroupBarrier();
  for (var i = lid; i < BK * DK4; i += WG) {
    let key = s0 + i / DK4;
    var x = vec4<f32>(0.0);
    if (key < P.S) { x = loadK4(((b * P.S + key) * P.G + g) * DK, (i % DK4) * 4u); }
    ks[i] = x;
  }
  for (var i = lid; i < BK * DV4; i += WG) {
    let key = s0 + i / DV4;
    var x = vec4<f32>(0.0);
    if (key < P.S) { x = loadV4(((b * P.S + key) * P.G + g) * DV, (i % DV4) * 4u); }
    vs[i] = x;
  }
  workgroupBarrier();
}
