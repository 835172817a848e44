// NSA selected attention, dK and dV in one pass (after nsa_attention_dkdv.wgsl): bindings 7 gradK,
// 8 gradV, 9 rev: one storage binding past WebGPU's portable 8, for adapters that allow it (GPUs
// commonly do; nsa-attention.ts falls back to nsa_attention_dkdv_sel.wgsl's two passes). Each
// staged query row's q·k and dO·v are computed once for both gradients instead of q·k twice, and
// the list and rows are staged once. Same terms, same order per gradient as the two passes.
// The *Split entry point runs one workgroup per (chunk, head) and writes the head's parts.

fn keyGradsSelBothOf(b: u32, g: u32, x: u32, h0: u32, hn: u32, split: bool, lid: u32) {
  let kt = chunkKeys(b, g, x, h0, hn, split, 0u, 1u, lid);
  selChunkRows(b, g, x, kt, hn, 3u, lid);
  storeKeyGrads(kt);
}

@compute @workgroup_size(WG)
fn keyGradsSelBoth(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsSelBothOf(wid.z, wid.y, wid.x, 0u, P.hpg, false, lid);
}

@compute @workgroup_size(WG)
fn keyGradsSelBothSplit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsSelBothOf(wid.z, wid.y / P.hpg, wid.x, wid.y % P.hpg, 1u, true, lid);
}
