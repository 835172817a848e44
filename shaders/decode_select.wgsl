// GPU decode, top-n selection of the new query (after decode_common.wgsl, nsa_topn.wgsl and
// nsa_score_row.wgsl): one workgroup of WG = SR_WG lanes per (b, g) (workgroup_id, so every barrier
// is in uniform control flow), for the single row t = st[0].
// 1. Scores: scoreRow of nsa_score_row.wgsl, the function the training kernel (nsa_select.wgsl
//    scores) runs per (b, t, g) row — same inputs, same bits by construction
//    (tests/decode/gpu-decode.test.ts checks scores and selections against it) — into
//    scores[b, g, j < nb], and each head's p_cmp into its row of the attention scratch
//    (scratch[(b·H + head)·cap + k]: free until the attention kernels run; cap ≥ Nmax ≥ n), where
//    the compressed branch's attend dispatch (next) takes them as its weights.
// 2. Lane 0 (after a storage barrier): the forced blocks and the best rem = min(nSel, nb) − #forced
//    others by (P descending, j ascending), by the scan of nsa_topn.wgsl that nsa_select.wgsl's
//    topN runs too, written ascending and −1 padded to sel[slot + (b·G + g)·nSel + ·].
// Bindings: q [B, H, dk], kc [B, Nmax, G, dk], scratch [B, H, cap], scores [B, G, nBmax] (scratch),
// sel (i32).

// The top-n scan's access to this kernel's buffers (see nsa_topn.wgsl).
fn topnScore(i: u32) -> f32 { return scores[i]; }
fn topnWrite(i: u32, j: i32) { sel[i] = j; }

// The row accessors of nsa_score_row.wgsl for the workgroup's (b, g), set by selectTop.
var<private> qRow: u32;     // q offset of the group's first head
var<private> kcRow: u32;    // kc offset of (b, block 0, g)
var<private> sRow: u32;     // scores offset of (b, g)
var<private> probRow: u32;  // scratch offset of the group's first head
fn srQ(m: u32, c: u32) -> f32 { return q[qRow + m * P.dk + c]; }
fn srKc(k: u32, c: u32) -> f32 { return kc[kcRow + k * P.G * P.dk + c]; }
fn srScore(j: u32) -> f32 { return scores[sRow + j]; }
fn srSetScore(j: u32, v: f32) { scores[sRow + j] = v; }
fn srProb(m: u32, k: u32, p: f32) { scratch[probRow + m * P.cap + k] = p; }

// Points the accessors at bg = b·G + g; returns the offset of its scores row.
fn setGroup(bg: u32) -> u32 {
  let g = bg % P.G;
  let b = bg / P.G;
  let head0 = b * P.H + g * P.hpg;
  qRow = head0 * P.dk;
  kcRow = (b * P.Nmax * P.G + g) * P.dk;
  sRow = bg * P.nBmax;
  probRow = head0 * P.cap;
  return sRow;
}

var<workgroup> tShared: u32;

@compute @workgroup_size(WG)
fn selectTop(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let bg = wid.x + wid.y * nwg.x;
  if (bg >= P.B * P.G) { return; }
  if (lane == 0u) { tShared = st[0]; }
  let t = workgroupUniformLoad(&tShared);
  let bt = t / P.lSel;
  let base = setGroup(bg);

  // 1. Scores (and p_cmp into the scratch rows).
  scoreRow(lane, t, P.hpg, P.dk, P.l, P.d, P.lSel, P.scale, bt + 1u);
  if (lane != 0u) { return; }

  // 2. Top-n (lane 0): the scan of nsa_topn.wgsl, as nsa_select.wgsl's topN.
  topnSelect(bt, P.nSel, P.forceInit != 0u, P.forceLocal, base, P.slot + bg * P.nSel);
}

// The software adapters' twin (the training kernel there runs scoreRowSerial too, so decode and
// training share one function on every adapter): one invocation per (b, g).
@compute @workgroup_size(1)
fn selectTopSerial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let bg = wid.x + wid.y * nwg.x;
  if (bg >= P.B * P.G) { return; }
  let t = st[0];
  let bt = t / P.lSel;
  let base = setGroup(bg);
  scoreRowSerial(t, P.hpg, P.dk, P.l, P.d, P.lSel, P.scale, bt + 1u);
  topnSelect(bt, P.nSel, P.forceInit != 0u, P.forceLocal, base, P.slot + bg * P.nSel);
}
