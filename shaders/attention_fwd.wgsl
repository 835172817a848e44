// Dense causal attention with grouped-query heads, forward, flash style (online softmax), after
// attention_common.wgsl and attention_dense_rows.wgsl (row mapping, K/V tiles).
// q [B,T,H,DK], k [B,T,G,DK], v [B,T,G,DV], out [B,T,H,DV], lse [B,H,T] (natural log).
// One thread per query row keeps its q row and output accumulator in registers. Scores are kept in
// log2 units (scale folded with log2 e) and the running state is rescaled once per CH keys.

const CH: u32 = 8u;   // keys per online-softmax rescale (BK is a multiple)

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = queryRow(wid, lid);
  let t = r.t;
  let tLast = lastQuery(wid.x);

  var qr: array<vec4<f32>, MAX4>;
  var o: array<vec4<f32>, MAX4>;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(r.x * DK, i * 4u); }
  var m = NEG;   // running max of the scores (log2 units)
  var l = 0.0;   // running Σ exp2(score − m)

  let nTiles = tLast / BK + 1u;
  for (var tile = 0u; tile < nTiles; tile++) {
    let s0 = tile * BK;
    stageKeys(r.b, r.g, s0, lid);
    let nKeys = min(BK, tLast + 1u - s0);
    for (var c0 = 0u; c0 < nKeys; c0 += CH) {
      if (s0 + c0 > t) { break; }   // the rest of the tile is in this row's future
      var sc: array<f32, CH>;
      var mx = m;
      for (var c = 0u; c < CH; c++) {
        let kk = c0 + c;
        var acc = vec4<f32>(0.0);
        for (var i = 0u; i < DK4; i++) { acc = fma(qr[i], ks[kk * DK4 + i], acc); }
        let s = (acc.x + acc.y + acc.z + acc.w) * P.scaleLog2e;
        sc[c] = select(NEG, s, s0 + kk <= t);
        mx = max(mx, sc[c]);
      }
      let alpha = exp2(m - mx);
      l *= alpha;
      for (var i = 0u; i < DV4; i++) { o[i] *= alpha; }
      for (var c = 0u; c < CH; c++) {
        let kk = c0 + c;
        let p = select(0.0, exp2(sc[c] - mx), s0 + kk <= t);
        l += p;
        for (var i = 0u; i < DV4; i++) { o[i] = fma(vec4<f32>(p), vs[kk * DV4 + i], o[i]); }
      }
      m = mx;
    }
  }

  if (!r.live) { return; }
  let inv = 1.0 / l;
  for (var i = 0u; i < DV4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DV) { out[r.x * DV + d] = o[i][c] * inv; }
    }
  }
  lse[r.lrow] = lseOf(m, l);
}
