// GPU decode, top-n selection of the new query (after decode_common.wgsl): one invocation per
// (b, g), the arithmetic of shaders/nsa_select.wgsl for the single row t = st[0] — each head's
// p_cmp from its own max and sum over the visible compressed blocks, spread over the selection
// blocks by overlap, heads added in ascending order into scores[b, g, ·]; then the forced blocks
// and the best rem = min(nSel, nb) − #forced others by (P descending, j ascending), written
// ascending and −1 padded to sel[slot + (b·G + g)·nSel + ·].
// Bindings: q [B, H, dk], kc [B, Nmax, G, dk], scores [B, G, nBmax] (scratch), sel (i32).

const WG: u32 = 64u;

fn cmpScore(qo: u32, ko: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < P.dk; c++) { s = fma(q[qo + c], kc[ko + c], s); }
  return s * P.scale;
}

@compute @workgroup_size(WG)
fn selectTop(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let bg = gid.x + gid.y * nwg.x * WG;
  if (bg >= P.B * P.G) { return; }
  let g = bg % P.G;
  let b = bg / P.G;
  let t = st[0];
  let n = ncmp(t);
  let bt = t / P.lSel;
  let nb = bt + 1u;
  let base = bg * P.nBmax;
  for (var j = 0u; j < nb; j++) { scores[base + j] = 0.0; }
  let lf = f32(P.l);
  if (n > 0u) {
    for (var m = 0u; m < P.hpg; m++) {
      let qo = (b * P.H + g * P.hpg + m) * P.dk;
      var mx = cmpScore(qo, (b * P.Nmax * P.G + g) * P.dk);
      for (var k = 1u; k < n; k++) { mx = max(mx, cmpScore(qo, ((b * P.Nmax + k) * P.G + g) * P.dk)); }
      var sum = 0.0;
      for (var k = 0u; k < n; k++) { sum += exp(cmpScore(qo, ((b * P.Nmax + k) * P.G + g) * P.dk) - mx); }
      for (var k = 0u; k < n; k++) {
        let p = exp(cmpScore(qo, ((b * P.Nmax + k) * P.G + g) * P.dk) - mx) / sum;
        let lo = k * P.d;
        let hi = lo + P.l;
        for (var j = lo / P.lSel; j <= (hi - 1u) / P.lSel; j++) {
          let ov = f32(min(hi, (j + 1u) * P.lSel) - max(lo, j * P.lSel)) / lf;
          scores[base + j] += p * ov;
        }
      }
    }
  }

  let take = min(P.nSel, nb);
  let fInit = P.forceInit != 0u;
  let fL = P.forceLocal;
  let nForced = min(fL, nb) + select(0u, 1u, fInit && fL <= bt);
  let rem = take - nForced;
  var found = 0u;
  var lastP = 0.0;
  var lastJ = 0u;
  for (var step = 0u; step < rem; step++) {
    var best = -1;
    var bestP = 0.0;
    for (var j = 0u; j < nb; j++) {
      if ((fInit && j == 0u) || j + fL > bt) { continue; }
      let p = scores[base + j];
      if (isNan(p)) { continue; }
      let after = found == 0u || p < lastP || (p == lastP && j > lastJ);
      if (after && (best < 0 || p > bestP)) {
        best = i32(j);
        bestP = p;
      }
    }
    if (best < 0) { break; }
    found++;
    lastP = bestP;
    lastJ = u32(best);
  }
  let out = P.slot + bg * P.nSel;
  var m = 0u;
  for (var j = 0u; j < nb && m < P.nSel; j++) {
    var chosen = (fInit && j == 0u) || j + fL > bt;
    if (!chosen && found > 0u) {
      let p = scores[base + j];
      chosen = !isNan(p) && (p > lastP || (p == lastP && j <= lastJ));
    }
    if (chosen) {
      sel[out + m] = i32(j);
      m++;
    }
  }
  for (; m < P.nSel; m++) { sel[out + m] = -1; }
}
