// NSA compressed and sliding-window attention, backward part 2: dQ per query row, query-tiled (after
// attention_common.wgsl, attention_bwd_common.wgsl, nsa_attention_common.wgsl,
// attention_dense_rows.wgsl, nsa_attention_tiled.wgsl and attention_rows_dq.wgsl: dense attention's
// row loop; part 1, nsa_attention_delta.wgsl, wrote delta = rowsum(dO ∘ O)). The forward's tiling
// (nsa_attention_tiled_fwd.wgsl): WG rows of one (b, g) share each staged K/V tile; one thread per
// row goes over its keys [keyLo(t), keyHi(t)) ascending:
//   P = exp(q·k/√DK − lse),  dS = P (dO·v − delta),  dQ += dS k / √DK.
// gradQ is overwritten, or added to when P.accumulate = 1 (the three branches share one dQ). Each
// element has one writer in a fixed order: no atomics, same bits.
// Bindings: 4 lse, 5 dout, 6 delta, 7 gradQ.

@compute @workgroup_size(WG)
fn backwardDq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = queryRow(wid, lid);
  // lse is −inf only for a query without keys, which visits none.
  let dq = rowDq(r, rowKeys(r.t), stagedKeys(wid.x), stagedLse(lse[r.lrow]), delta[r.lrow], lid);

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
