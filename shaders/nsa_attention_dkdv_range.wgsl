// NSA compressed and window attention, dK and dV (after nsa_attention_dkdv.wgsl): bindings 7 gradK,
// 8 gradV. The *Split entry point runs one workgroup per (chunk, head) instead of per (chunk, group)
// and writes each head's part (attention_sum_heads.wgsl adds them): H/G times the workgroups, for a
// GPU that B·chunks·G workgroups leave idle. It may also cut each chunk's query range into
// P.qSplits equal pieces, one workgroup each (wid.x = chunk·qSplits + piece), writing a part per
// (head, piece): parts [B,S,G,hpg,qSplits,·], added heads-then-pieces ascending.

@compute @workgroup_size(WG)
fn keyGrads(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsOf(wid.z, wid.y, wid.x, 0u, P.hpg, false, 0u, 1u, lid);
}

// One workgroup per (chunk, query piece, head): wid.x = chunk·qSplits + piece, wid.y = g·hpg + head.
@compute @workgroup_size(WG)
fn keyGradsSplit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsOf(wid.z, wid.y / P.hpg, wid.x / P.qSplits, wid.y % P.hpg, 1u, true, wid.x % P.qSplits, P.qSplits, lid);
}
