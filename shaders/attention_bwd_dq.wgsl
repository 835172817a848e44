// Dense causal attention, backward part 1: dQ per query row, and delta = rowsum(dO ∘ O) for part 2
// (after attention_common.wgsl, attention_bwd_common.wgsl, attention_dense_rows.wgsl: the forward's
// row mapping and K/V tiles, attention_dense_log2.wgsl and attention_rows_dq.wgsl: the row loop).
// One thread per row loops over the keys s ≤ t in ascending order:
//   P = exp(q·k_s/√DK − lse),  dS = P (dO·v_s − delta),  dQ = Σ_s dS k_s / √DK.
// Each output element is written by exactly one thread in a fixed order: no atomics, same bits.
// Bindings: 1 q, 2 k, 3 v, 4 lse, 5 dout, 6 delta (written here), 7 gradQ, 8 out.

@compute @workgroup_size(WG)
fn backwardDq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = queryRow(wid, lid);
  let oBase = r.x * DV;
  var dl = 0.0;
  for (var d = 0u; d < DV; d++) { dl = fma(dout[oBase + d], out[oBase + d], dl); }
  if (r.live) { delta[r.lrow] = dl; }

  // Causal: keys [0, t] of the row, [0, last query] staged.
  let dq = rowDq(r, KeyRange(0u, r.t + 1u), KeyRange(0u, lastQuery(wid.x) + 1u), stagedLse(lse[r.lrow]), dl, lid);

  if (!r.live) { return; }
  for (var i = 0u; i < DK4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DK) { gradQ[r.x * DK + d] = dq[i][c] * P.scale; }
    }
  }
}
