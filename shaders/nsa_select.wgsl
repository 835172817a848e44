// NSA selection (docs/nsa-spec.md "Selection scores" and "Top-n selection"), batched over B sequences.
// scores: blockScores[b,t,g,j] = P = Σ_{heads i of g} Σ_{k < ncmp(t)} p_cmp[b,t,i,k] · overlap(k,j),
//         from q and the compressed keys kc, one workgroup per (b,t,g) row running scoreRow of
//         nsa_score_row.wgsl (which decode_select.wgsl runs too): each head's p_cmp from its own
//         row max and sum in natural-log units, p_k = exp((s_k − max)·scale) · (1/Σ), so Σ_k p_k = 1
//         to f32 rounding at any |s| and equal scores give bit-equal probabilities (no log-sum-exp
//         round trip). Per j: heads ascending, blocks k ascending; the row is zeroed first.
//         scoresTiled (nsa_score_tiled.wgsl, appended) is the same arithmetic for 64 queries a
//         workgroup, sharing staged compressed keys (GPUs, where its grid fills them).
// topN:   sel[b,t,g,·] = the top-n of the row's blockScores, one invocation per (b,t,g) row: the
//         scan of nsa_topn.wgsl (shared with decode_select.wgsl), ascending, −1 padded.
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 64u;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

// The row accessors of nsa_score_row.wgsl: the workgroup's (b, t, g) row, set by `scores`.
var<private> qRow: u32;   // q offset of the group's first head at (b, t)
var<private> kcRow: u32;  // kc offset of (b, block 0, g)
var<private> sRow: u32;   // blockScores offset of the row
fn srQ(m: u32, c: u32) -> f32 { return q[qRow + m * P.dk + c]; }
fn srKc(k: u32, c: u32) -> f32 { return kc[kcRow + k * P.G * P.dk + c]; }
fn srScore(j: u32) -> f32 { return blockScores[sRow + j]; }
fn srSetScore(j: u32, v: f32) { blockScores[sRow + j] = v; }
fn srProb(m: u32, k: u32, p: f32) {}

// Points the accessors at row (b·T + t)·G + g; returns its query position t.
fn setRow(row: u32) -> u32 {
  let g = row % P.G;
  let t = (row / P.G) % P.T;
  let b = row / (P.G * P.T);
  qRow = ((b * P.T + t) * P.H + g * (P.H / P.G)) * P.dk;
  kcRow = (b * P.N * P.G + g) * P.dk;
  sRow = row * P.nB;
  return t;
}

// One workgroup of SR_WG lanes per (b, t, g) row: wid = row mod / div the grid's x extent.
@compute @workgroup_size(SR_WG)
fn scores(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let row = wid.x + wid.y * nwg.x;   // (b·T + t)·G + g
  if (row >= P.total) { return; }
  scoreRow(lane, setRow(row), P.H / P.G, P.dk, P.l, P.d, P.lSel, P.scale, P.nB);
}

// One invocation per (b, t, g) row, scoreRowSerial: the software adapters' entry (same bits).
@compute @workgroup_size(WG)
fn scoresSerial(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = linear(gid, nwg);   // (b·T + t)·G + g
  if (row >= P.total) { return; }
  scoreRowSerial(setRow(row), P.H / P.G, P.dk, P.l, P.d, P.lSel, P.scale, P.nB);
}

// The top-n scan's access to this kernel's buffers (see nsa_topn.wgsl).
fn topnScore(i: u32) -> f32 { return blockScores[i]; }
fn topnWrite(i: u32, j: i32) { sel[i] = j; }

@compute @workgroup_size(WG)
fn topN(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = linear(gid, nwg);   // (b·T + t)·G + g
  if (row >= P.total) { return; }
  let t = (row / P.G) % P.T;
  topnSelect(t / P.lSel, P.nSel, P.forceInit != 0u, P.forceLocal, row * P.nB, row * P.nSel);
}
