// The decode selection's access to its buffers (after nsa_score_row.wgsl and nsa_topn.wgsl, whose
// accessors these define), shared by the software adapters' kernel (decode_select.wgsl) and the
// GPUs' split form (decode_select_split.wgsl). Both bind q [B, H, dk], kc [B, Nmax, G, dk],
// pCmp [B, H, cap] (the attention scratch, where each head's p_cmp is left for the compressed
// branch's attend), scores [B, G, nBmax] and sel (i32).

// The row accessors of nsa_score_row.wgsl for (b, g), set by setGroup.
var<private> qRow: u32;    // q offset of the group's first head
var<private> kcRow: u32;   // kc offset of (b, block 0, g)
var<private> sRow: u32;    // scores offset of (b, g)
var<private> probRow: u32; // pCmp offset of the group's first head
fn srQ(m: u32, c: u32) -> f32 { return q[qRow + m * P.dk + c]; }
fn srKc(k: u32, c: u32) -> f32 { return kc[kcRow + k * P.G * P.dk + c]; }
fn srScore(j: u32) -> f32 { return scores[sRow + j]; }
fn srSetScore(j: u32, v: f32) { scores[sRow + j] = v; }
fn srProb(m: u32, k: u32, p: f32) { pCmp[probRow + m * P.cap + k] = p; }

// The top-n's access (see nsa_topn.wgsl; nsa_topn_group.wgsl reads and writes through it too).
fn topnScore(i: u32) -> f32 { return scores[i]; }
fn topnWrite(i: u32, j: i32) { sel[i] = j; }

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
