// NSA selection (docs/nsa-spec.md "Selection scores" and "Top-n selection"), batched over B sequences.
// scores: blockScores[b,t,g,j] = P = Σ_{heads i of g} Σ_{k < ncmp(t)} p_cmp[b,t,i,k] · overlap(k,j),
//         from q and the compressed keys kc, one invocation per (b,t,g) row. Each head's p_cmp is
//         computed here in natural-log units from its own row max and sum — s_k = q·kc_k,
//         m = max_k s_k, e_k = exp((s_k − m)·scale), p_k = e_k · (1 / Σ e) — same s_k and e_k in every
//         pass, so Σ_k p_k = 1 to f32 rounding at any |s|, and equal scores give bit-equal
//         probabilities (no log-sum-exp round trip, no second kernel's rounding). Heads are added
//         in ascending order, blocks k ascending; the row is zeroed first.
// topN:   sel[b,t,g,·] = the top-n of the row's blockScores, one invocation per (b,t,g) row: the
//         scan of nsa_topn.wgsl (shared with decode_select.wgsl), ascending, −1 padded.
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 64u;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

// s = q[b,t,i]·kc[b,k,g], unscaled: one fixed order of operations for every pass. The scale enters
// as exp((s − m)·scale) and products are added by explicit fma only: no a·b + c is left for a GPU
// compiler to fuse (or not) into one fma, which on NVIDIA's Vulkan driver made decode_select.wgsl
// differ from this kernel by one ulp. Decode must reproduce these bits.
fn cmpDot(qo: u32, ko: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < P.dk; c++) { s = fma(q[qo + c], kc[ko + c], s); }
  return s;
}

@compute @workgroup_size(WG)
fn scores(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = linear(gid, nwg);   // (b·T + t)·G + g
  if (row >= P.total) { return; }
  let g = row % P.G;
  let t = (row / P.G) % P.T;
  let b = row / (P.G * P.T);
  let ncmp = select(0u, (t + 1u - P.l) / P.d + 1u, t + 1u >= P.l);
  let out = row * P.nB;
  for (var j = 0u; j < P.nB; j++) { blockScores[out + j] = 0.0; }
  if (ncmp == 0u) { return; }
  let h = P.H / P.G;
  let lf = f32(P.l);
  for (var m = 0u; m < h; m++) {
    let qo = ((b * P.T + t) * P.H + g * h + m) * P.dk;
    var mx = cmpDot(qo, (b * P.N * P.G + g) * P.dk);
    for (var k = 1u; k < ncmp; k++) { mx = max(mx, cmpDot(qo, ((b * P.N + k) * P.G + g) * P.dk)); }
    var sum = 0.0;
    for (var k = 0u; k < ncmp; k++) { sum += exp((cmpDot(qo, ((b * P.N + k) * P.G + g) * P.dk) - mx) * P.scale); }
    let inv = 1.0 / sum;
    for (var k = 0u; k < ncmp; k++) {
      let p = exp((cmpDot(qo, ((b * P.N + k) * P.G + g) * P.dk) - mx) * P.scale) * inv;
      // Block k covers [k·d, k·d + l): selection blocks floor(k·d / lSel) … floor((k·d + l − 1) / lSel).
      let lo = k * P.d;
      let hi = lo + P.l;
      for (var j = lo / P.lSel; j <= (hi - 1u) / P.lSel; j++) {
        let ov = f32(min(hi, (j + 1u) * P.lSel) - max(lo, j * P.lSel)) / lf;
        blockScores[out + j] = fma(p, ov, blockScores[out + j]);
      }
    }
  }
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
