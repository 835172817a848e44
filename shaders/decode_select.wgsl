// Decode, top-n selection of the new query on software adapters (after decode_common.wgsl,
// nsa_topn.wgsl and nsa_score_row.wgsl): one invocation per (b, g), for the single row t = st[0]
// (GPUs run the split form, decode_select_split.wgsl, which gives the same bits).
// 1. Scores: scoreRowSerial of nsa_score_row.wgsl, the function the training kernel
//    (nsa_select.wgsl scoresSerial) runs per (b, t, g) row on these adapters — same inputs, same
//    bits by construction (tests/decode/gpu-decode.test.ts checks scores and selections against
//    it) — into scores[b, g, j < nb], and each head's p_cmp into its row of the attention scratch
//    (scratch[(b·H + head)·cap + k]: free until the attention kernels run; cap ≥ Nmax ≥ n), where
//    the compressed branch's attend dispatch (next) takes them as its weights.
// 2. The forced blocks and the best rem = min(nSel, nb) − #forced others by (P descending, j
//    ascending), by the scan of nsa_topn.wgsl that nsa_select.wgsl's topN runs too, written
//    ascending and −1 padded to sel[slot + (b·G + g)·nSel + ·].
// Bindings: q [B, H, dk], kc [B, Nmax, G, dk], scratch [B, H, cap], scores [B, G, nBmax] (scratch),
// sel (i32).

// The top-n scan's access to this kernel's buffers (see nsa_topn.wgsl).
fn topnScore(i: u32) -> f32 { return scores[i]; }
fn topnWrite(i: u32, j: i32) { sel[i] = j; }

// The row accessors of nsa_score_row.wgsl for the invocation's (b, g), set by setGroup.
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

// One invocation per (b, g) (the training kernel on these adapters runs scoreRowSerial too).
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
