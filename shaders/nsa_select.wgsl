// NSA selection (docs/nsa-spec.md "Selection scores" and "Top-n selection"), batched over B sequences.
// scores: P[b,t,g,j] = Σ_{heads i of g} Σ_{k < ncmp(t)} exp(q[b,t,i]·kc[b,k,g]/√dk − lse[b,i,t]) ·
//         overlap(k,j); one invocation per (b,t,g,j), looping only over the blocks k that overlap j
//         (k·d < (j+1)·lSel and k·d + l > j·lSel). lse is never read when ncmp(t) = 0, so any
//         sentinel there is fine.
// topN:   one invocation per (b,t,g) row. Forced blocks (0 if forceInit; bt, …, bt − forceLocal + 1)
//         are always in. The other candidates j ≤ bt are ranked by (P descending, j ascending), a
//         total order; the rem = min(nSel, bt + 1) − #forced best are found by rem scans, each taking
//         the best candidate strictly after the previous pick, so no per-row array is needed. A final
//         ascending scan writes forced blocks and every candidate at or before the last pick, then
//         −1 padding. NaN scores are never picked (the row comes out short, which the stats count as
//         invalid).
// Bindings: scores: s1 = q, s2 = kc, s3 = lse, s4 = P (written)
//           topN:   s1 = P, i1 = selection (written)
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 64u;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

@compute @workgroup_size(WG)
fn scores(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = linear(gid, nwg);
  if (x >= P.total) { return; }
  let j = x % P.nB;
  let row = x / P.nB;      // (b·T + t)·G + g
  let g = row % P.G;
  let t = (row / P.G) % P.T;
  let b = row / (P.G * P.T);
  let ncmp = select(0u, (t + 1u - P.l) / P.d + 1u, t + 1u >= P.l);
  let jLo = j * P.lSel;
  let jHi = jLo + P.lSel; // exclusive
  let kLo = max(0, (i32(jLo) - i32(P.l) + i32(P.d)) / i32(P.d)); // ceil((jLo − l + 1)/d), ≥ 0
  let kHi = min(i32(ncmp) - 1, i32((jHi - 1u) / P.d));
  let h = P.H / P.G;
  let lInv = 1.0 / f32(P.l);
  var acc = 0.0;
  for (var ki = kLo; ki <= kHi; ki++) {
    let k = u32(ki);
    let ov = f32(min(k * P.d + P.l, jHi) - max(k * P.d, jLo)) * lInv;
    let ko = ((b * P.N + k) * P.G + g) * P.dk;
    var pk = 0.0;
    for (var m = 0u; m < h; m++) {
      let i = g * h + m;
      let qo = ((b * P.T + t) * P.H + i) * P.dk;
      var s = 0.0;
      for (var c = 0u; c < P.dk; c++) { s += s1[qo + c] * s2[ko + c]; }
      pk += exp(s * P.scale - s3[(b * P.H + i) * P.T + t]);
    }
    acc += pk * ov;
  }
  s4[x] = acc;
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
