// The dQ row loop of the query-tiled kernels: dense attention's (attention_bwd_dq.wgsl) and the NSA
// compressed and window branches' (nsa_attention_tiled_dq.wgsl), after attention_bwd_common.wgsl
// and attention_dense_rows.wgsl. One thread per row goes over its keys `row` in ascending order
// while the workgroup stages the keys `staged` (a uniform range) BK at a time:
//   P = keyProb(q·k, z),  dS = P (dO·v − delta),  dQ += dS k   (the caller scales by 1/√DK).
// The includer provides keyProb(dot, z) in its own units (z: its stagedLse of the row's lse), as for
// attention_keys.wgsl: dense log2 (attention_dense_log2.wgsl), NSA natural (nsa_attention_common.wgsl).

fn rowDq(r: QueryRow, row: KeyRange, staged: KeyRange, z: f32, dl: f32, lid: u32) -> array<vec4<f32>, MAX4> {
  var qr: array<vec4<f32>, MAX4>;
  var dor: array<vec4<f32>, MAX4>;
  var dq: array<vec4<f32>, MAX4>;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(r.x * DK, i * 4u); }
  for (var i = 0u; i < DV4; i++) { dor[i] = loadDout4(r.x * DV, i * 4u); }

  for (var s0 = staged.lo; s0 < staged.hi; s0 += BK) {
    stageKeys(r.b, r.g, s0, lid);
    let nKeys = min(BK, staged.hi - s0);
    for (var kk = 0u; kk < nKeys; kk++) {
      let key = s0 + kk;
      if (key >= row.hi) { break; }   // keys ascend: the rest are past this row's range
      if (key < row.lo) { continue; }
      var a = vec4<f32>(0.0);
      for (var i = 0u; i < DK4; i++) { a = fma(qr[i], ks[kk * DK4 + i], a); }
      var e = vec4<f32>(0.0);
      for (var i = 0u; i < DV4; i++) { e = fma(dor[i], vs[kk * DV4 + i], e); }
      let p = keyProb(a.x + a.y + a.z + a.w, z);
      let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - dl));
      for (var i = 0u; i < DK4; i++) { dq[i] = fma(ds, ks[kk * DK4 + i], dq[i]); }
    }
  }
  return dq;
}
