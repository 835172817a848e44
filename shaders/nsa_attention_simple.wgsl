// NSA branch attention, shared part of the software-oriented ("simple") variant: its forward, dQ
// and dK/dV (nsa_attention_simple_*.wgsl) follow it, after attention_common.wgsl and
// nsa_attention_common.wgsl. Forward and
// dQ run one invocation per query row x = (b·T + t)·H + head — the row of q — reading its keys
// straight from storage in ascending order, all state in private memory: no workgroup memory and
// no barriers. On a CPU driver (SwiftShader) a barrier switches between emulated invocations and
// workgroup memory is zero-initialised per workgroup, so this runs several times faster there than
// the group-centric variant (nsa_attention_rows.wgsl), which shares key tiles between the heads of
// a group on a GPU. Consecutive invocations are the heads of one query: same keys, same loop trips.
// The key rows of query t: cmp [0, ncmp(t)), win [t + 1 − min(w, t + 1), t + 1), sel the selected
// blocks in ascending order, each cut at t (a −1 padding entry or a block after t is empty).

const WG: u32 = 64u;
const MAXD: u32 = 128u;   // DK, DV ≤ 128

struct Row {
  b: u32,
  t: u32,
  head: u32,
  g: u32,
  valid: bool,
}

// The invocation's query row (1-D grid folded into 2-D); rows past B·T·H are not valid.
fn queryRow(gid: vec3<u32>, nwg: vec3<u32>) -> Row {
  let x = gid.x + gid.y * nwg.x * WG;
  let head = x % P.H;
  let bt = x / P.H;
  return Row(bt / P.T, bt % P.T, head, head / P.hpg, x < P.rows);
}

// Key rows of query t for cmp and win: one ascending range [x, y).
fn keyRange(t: u32) -> vec2<u32> {
  if (P.branch == CMP) { return vec2<u32>(0u, ncmp(t)); }
  return vec2<u32>(t + 1u - min(P.w, t + 1u), t + 1u);
}

// Key rows of query t in selected block j (an entry of its selection row): [j·lSel, ...) cut at t.
fn blockRange(j: i32, t: u32) -> vec2<u32> {
  if (j < 0 || u32(j) * P.lSel > t) { return vec2<u32>(0u, 0u); }
  let lo = u32(j) * P.lSel;
  return vec2<u32>(lo, min(lo + P.lSel, t + 1u));
}
