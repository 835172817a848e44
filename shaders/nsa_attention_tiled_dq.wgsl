// NSA compressed and sliding-window attention, backward part 2: dQ per query row, query-tiled (after
// attention_common.wgsl, attention_bwd_common.wgsl, nsa_attention_common.wgsl and
// attention_dense_rows.wgsl; part 1, nsa_attention_delta.wgsl, wrote delta = rowsum(dO ∘ O)).
// The forward's tiling (nsa_attention_tiled_fwd.wgsl): WG rows of one (b, g) share each staged K/V
// tile; one thread per row goes over its keys [keyLo(t), keyHi(t)) ascending:
//   P = exp(q·k/√DK − lse),  dS = P (dO·v − delta),  dQ += dS k / √DK.
// gradQ is overwritten, or added to when P.accumulate = 1 (the three branches share one dQ). Each
// element has one writer in a fixed order: no atomics, same bits.
// Bindings: 4 lse, 5 dout, 6 delta, 7 gradQ.

@compute @workgroup_size(WG)
fn backwardDq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = queryRow(wid, lid);
  let t = r.t;
  let lo = keyLo(t);
  let hi = keyHi(t);
  let sFirst = keyLo(firstQuery(wid.x));
  let sEnd = keyHi(lastQuery(wid.x));

  var qr: array<vec4<f32>, MAX4>;
  var dor: array<vec4<f32>, MAX4>;
  var dq: array<vec4<f32>, MAX4>;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(r.x * DK, i * 4u); }
  for (var i = 0u; i < DV4; i++) { dor[i] = loadDout4(r.x * DV, i * 4u); }
  let lr = lse[r.lrow];   // −inf only for a query without keys, which visits none
  let dl = delta[r.lrow];

  for (var s0 = sFirst; s0 < sEnd; s0 += BK) {
    stageKeys(r.b, r.g, s0, lid);
    let nKeys = min(BK, sEnd - s0);
    for (var kk = 0u; kk < nKeys; kk++) {
      let key = s0 + kk;
      if (key >= hi) { break; }   // keys ascend: the rest are past this row's range
      if (key < lo) { continue; }
      var a = vec4<f32>(0.0);
      for (var i = 0u; i < DK4; i++) { a = fma(qr[i], ks[kk * DK4 + i], a); }
      var e = vec4<f32>(0.0);
      for (var i = 0u; i < DV4; i++) { e = fma(dor[i], vs[kk * DV4 + i], e); }
      let p = exp((a.x + a.y + a.z + a.w) * P.scale - lr);
      let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - dl));
      for (var i = 0u; i < DK4; i++) { dq[i] = fma(ds, ks[kk * DK4 + i], dq[i]); }
    }
  }

  if (!r.live) { return; }
  for (var i = 0u; i < DK4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DK) {
        var prev = 0.0;
        if (P.accumulate != 0u) { prev = gradQ[r.x * DK + d]; }
        gradQ[r.x * DK + d] = prev + dq[i][c] * P.scale;
      }
    }
  }
}
