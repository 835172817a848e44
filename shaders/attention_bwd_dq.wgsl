// Dense causal attention, backward part 1: dQ per query row, and delta = rowsum(dO ∘ O) for part 2
// (after attention_common.wgsl, attention_bwd_common.wgsl, attention_dense.wgsl and
// attention_dense_rows.wgsl: the forward's row mapping and K/V tiles). One thread per row loops
// over the keys s ≤ t in ascending order:
//   P = exp(q·k_s/√DK − lse),  dS = P (dO·v_s − delta),  dQ = Σ_s dS k_s / √DK.
// Each output element is written by exactly one thread in a fixed order: no atomics, same bits.
// Bindings: 1 q, 2 k, 3 v, 4 lse, 5 dout, 6 delta (written here), 7 gradQ, 8 out.

@compute @workgroup_size(WG)
fn backwardDq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = queryRow(wid, lid);
  let t = r.t;
  let tLast = lastQuery(wid.x);

  var qr: array<vec4<f32>, MAX4>;
  var dor: array<vec4<f32>, MAX4>;
  var dq: array<vec4<f32>, MAX4>;
  let qBase = r.x * DK;
  let oBase = r.x * DV;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(qBase, i * 4u); }
  for (var i = 0u; i < DV4; i++) { dor[i] = loadDout4(oBase, i * 4u); }
  var dl = 0.0;
  for (var d = 0u; d < DV; d++) { dl = fma(dout[oBase + d], out[oBase + d], dl); }
  let lse2 = lse[r.lrow] * LOG2E;
  if (r.live) { delta[r.lrow] = dl; }

  let nTiles = tLast / BK + 1u;
  for (var tile = 0u; tile < nTiles; tile++) {
    let s0 = tile * BK;
    stageKeys(r.b, r.g, s0, lid);
    let nKeys = min(BK, tLast + 1u - s0);
    for (var kk = 0u; kk < nKeys; kk++) {
      if (s0 + kk > t) { break; }   // keys ascend: the rest are in this row's future
      var a = vec4<f32>(0.0);
      for (var i = 0u; i < DK4; i++) { a = fma(qr[i], ks[kk * DK4 + i], a); }
      var e = vec4<f32>(0.0);
      for (var i = 0u; i < DV4; i++) { e = fma(dor[i], vs[kk * DV4 + i], e); }
      let p = exp2((a.x + a.y + a.z + a.w) * P.scaleLog2e - lse2);
      let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - dl));
      for (var i = 0u; i < DK4; i++) { dq[i] = fma(ds, ks[kk * DK4 + i], dq[i]); }
    }
  }

  if (!r.live) { return; }
  for (var i = 0u; i < DK4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DK) { gradQ[qBase + d] = dq[i][c] * P.scale; }
    }
  }
}
