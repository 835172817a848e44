// NSA selection (docs/nsa-spec.md "Selection scores" and "Top-n selection"), batched over B sequences.
// scores: P[b,t,g,j] = Σ_{heads i of g} Σ_{k < ncmp(t)} p_cmp[b,t,i,k] · overlap(k,j), one invocation
//         per (b,t,g) row. Each head's p_cmp is computed here in natural-log units from its own row
//         max and sum — s_k = q·kc_k/√dk, m = max_k s_k, e_k = exp(s_k − m), p_k = e_k / Σ e — with
//         the same s_k and e_k in every pass, so Σ_k p_k = 1 to f32 rounding at any |s|, and equal
//         scores give bit-equal probabilities (no log-sum-exp round trip, no second kernel's
//         rounding). Heads are added in ascending order, blocks k ascending; the row is zeroed first.
// topN:   one invocation per (b,t,g) row. Forced blocks (0 if forceInit; bt, …, bt − forceLocal + 1)
//         are always in. The other candidates j ≤ bt are ranked by (P descending, j ascending), a
//         total order; the rem = min(nSel, bt + 1) − #forced best are found by rem scans, each taking
//         the best candidate strictly after the previous pick, so no per-row array is needed. A final
//         ascending scan writes forced blocks and every candidate at or before the last pick, then
//         −1 padding. NaN scores are never picked (the row comes out short, which the stats count as
//         invalid).
// Bindings: scores: s1 = q, s2 = kc, s3 = P (written)
//           topN:   s1 = P, i1 = selection (written)
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 64u;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

// s = q[b,t,i]·kc[b,k,g]/√dk, one fixed order of operations for every pass.
fn cmpScore(qo: u32, ko: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < P.dk; c++) { s = fma(s1[qo + c], s2[ko + c], s); }
  return s * P.scale;
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
  for (var j = 0u; j < P.nB; j++) { s3[out + j] = 0.0; }
  if (ncmp == 0u) { return; }
  let h = P.H / P.G;
  let lf = f32(P.l);
  for (var m = 0u; m < h; m++) {
    let qo = ((b * P.T + t) * P.H + g * h + m) * P.dk;
    var mx = cmpScore(qo, (b * P.N * P.G + g) * P.dk);
    for (var k = 1u; k < ncmp; k++) { mx = max(mx, cmpScore(qo, ((b * P.N + k) * P.G + g) * P.dk)); }
    var sum = 0.0;
    for (var k = 0u; k < ncmp; k++) { sum += exp(cmpScore(qo, ((b * P.N + k) * P.G + g) * P.dk) - mx); }
    for (var k = 0u; k < ncmp; k++) {
      let p = exp(cmpScore(qo, ((b * P.N + k) * P.G + g) * P.dk) - mx) / sum;
      // Block k covers [k·d, k·d + l): selection blocks floor(k·d / lSel) … floor((k·d + l − 1) / lSel).
      let lo = k * P.d;
      let hi = lo + P.l;
      for (var j = lo / P.lSel; j <= (hi - 1u) / P.lSel; j++) {
        let ov = f32(min(hi, (j + 1u) * P.lSel) - max(lo, j * P.lSel)) / lf;
        s3[out + j] += p * ov;
      }
    }
  }
}

fn isNan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

@compute @workgroup_size(WG)
fn topN(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = linear(gid, nwg);
  if (row >= P.total) { return; }
  let t = (row / P.G) % P.T;
  let bt = t / P.lSel;
  let nb = bt + 1u;
  let take = min(P.nSel, nb);
  let fInit = P.forceInit != 0u;
  let fL = P.forceLocal;
  // Forced: j = 0 (forceInit) and bt − fL < j ≤ bt (written j + fL > bt to stay unsigned).
  let initInLocal = fL > bt;
  let nForced = min(fL, nb) + select(0u, 1u, fInit && !initInLocal);
  let rem = take - nForced; // ≥ 0: nSel ≥ forceInit + forceLocal and forced blocks are candidates
  let base = row * P.nB;

  var found = 0u;
  var lastP = 0.0;
  var lastJ = 0u;
  for (var step = 0u; step < rem; step++) {
    var best = -1;
    var bestP = 0.0;
    for (var j = 0u; j < nb; j++) {
      if ((fInit && j == 0u) || j + fL > bt) { continue; }
      let p = s1[base + j];
      if (isNan(p)) { continue; }
      let after = found == 0u || p < lastP || (p == lastP && j > lastJ);
      if (after && (best < 0 || p > bestP)) { // strict >: ties keep the lower j
        best = i32(j);
        bestP = p;
      }
    }
    if (best < 0) { break; }
    found++;
    lastP = bestP;
    lastJ = u32(best);
  }

  let out = row * P.nSel;
  var m = 0u;
  for (var j = 0u; j < nb && m < P.nSel; j++) {
    var chosen = (fInit && j == 0u) || j + fL > bt;
    if (!chosen && found > 0u) {
      let p = s1[base + j];
      chosen = !isNan(p) && (p > lastP || (p == lastP && j <= lastJ));
    }
    if (chosen) {
      i1[out + m] = i32(j);
      m++;
    }
  }
  for (; m < P.nSel; m++) { i1[out + m] = -1; }
}
