// NSA selected attention, backward part 2: dQ per query row (after attention_common.wgsl,
// attention_bwd_common.wgsl, nsa_attention_common.wgsl and nsa_attention_rows.wgsl; part 1,
// nsa_attention_delta.wgsl, wrote delta = rowsum(dO ∘ O)).
// Same workgroup, key enumeration and tiles as the forward; each lane recomputes
//   P = exp(q·k/√DK − lse),  dS = P (dO·v − delta),  dQ += dS k / √DK
// over its keys, and the lanes of a row are summed in lane order. gradQ is overwritten, or added
// to when P.accumulate = 1 (the three branches share one dQ). Each element has one writer.
// Bindings: 4 lse, 5 dout, 6 delta, 7 gradQ, 8 sel.

fn gradRow(b: u32, t: u32, g: u32, lid: u32, nk: u32) {
  let h = P.hpg;
  let me = laneOf(g, lid);

  var qr: array<vec4<f32>, MAX4>;
  var dor: array<vec4<f32>, MAX4>;
  var dq: array<vec4<f32>, MAX4>;
  let qBase = ((b * P.T + t) * P.H + me.head) * DK;
  let oBase = ((b * P.T + t) * P.H + me.head) * DV;
  for (var c = 0u; c < DK4; c++) { qr[c] = loadQ4(qBase, c * 4u); }
  for (var c = 0u; c < DV4; c++) { dor[c] = loadDout4(oBase, c * 4u); }
  let lrow = (b * P.H + me.head) * P.T + t;
  let lr = lse[lrow];   // −inf only for a query without keys, which has no tile
  let dl = delta[lrow];

  for (var n0 = 0u; n0 < nk; n0 += BK) {
    loadTile(b, t, g, nk, n0, lid);
    if (me.live) {
      let nValid = min(BK, nk - n0);
      for (var kk = me.lane; kk < nValid; kk += NL) {
        var a = vec4<f32>(0.0);
        for (var c = 0u; c < DK4; c++) { a = fma(qr[c], kv[kk * KS + c], a); }
        var e = vec4<f32>(0.0);
        for (var c = 0u; c < DV4; c++) { e = fma(dor[c], kv[BK * KS + kk * VS + c], e); }
        let p = exp((a.x + a.y + a.z + a.w) * P.scale - lr);
        let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - dl));
        for (var c = 0u; c < DK4; c++) { dq[c] = fma(ds, kv[kk * KS + c], dq[c]); }
      }
    }
  }

  // Sum the lanes of each row (in lane order) through the tile memory, CW columns per round.
  for (var c0 = 0u; c0 < DK4; c0 += CW) {
    workgroupBarrier();
    if (me.live) {
      for (var c = 0u; c < CW; c++) { if (c0 + c < DK4) { kv[lid * CW + c] = dq[c0 + c]; } }
    }
    workgroupBarrier();
    for (var x = lid; x < h * CW; x += WG) {
      let ri = x / CW;
      let c = c0 + x % CW;
      if (c < DK4) {
        var acc = vec4<f32>(0.0);
        for (var y = 0u; y < NL; y++) { acc += kv[(ri * NL + y) * CW + x % CW]; }
        let base = ((b * P.T + t) * P.H + g * h + ri) * DK;
        for (var e = 0u; e < 4u; e++) {
          let d = c * 4u + e;
          if (d < DK) {
            var prev = 0.0;
            if (P.accumulate != 0u) { prev = gradQ[base + d]; }
            gradQ[base + d] = prev + acc[e] * P.scale;
          }
        }
      }
    }
  }
}

@compute @workgroup_size(WG)
fn backwardDqSel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  stageSel(wid.z, wid.x, wid.y, lid);
  gradRow(wid.z, wid.x, wid.y, lid, uniformKeyCount(wid.x, lid));
}
