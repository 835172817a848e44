// NSA selected attention, dK or dV (after nsa_attention_dkdv.wgsl): bindings 7 gradOut, 8 rev. The
// reverse index costs a binding, so within WebGPU's portable 8 storage bindings sel runs twice:
// P.want = 1 (gradOut = gradK) and P.want = 2 (gradOut = gradV); nsa_attention_dkdv_sel_both.wgsl
// does both in one pass where the adapter allows 9. The *Split entry point runs one workgroup per
// (chunk, head) and writes the head's part (attention_sum_heads.wgsl adds them).

fn keyGradsSelOf(b: u32, g: u32, x: u32, h0: u32, hn: u32, split: bool, lid: u32) {
  let kt = chunkKeys(b, g, x, h0, hn, split, 0u, 1u, lid);
  selChunkRows(b, g, x, kt, hn, P.want, lid);
  if (!kt.live) { return; }
  if ((P.want & 1u) != 0u) {
    for (var c = 0u; c < KC4; c++) {
      for (var e = 0u; e < 4u; e++) {
        let d = (kt.sl * KC4 + c) * 4u + e;
        if (d < DK) { gradOut[kt.out * DK + d] = dk[c][e] * P.scale; }
      }
    }
  } else {
    for (var c = 0u; c < VC4; c++) {
      for (var e = 0u; e < 4u; e++) {
        let d = (kt.sl * VC4 + c) * 4u + e;
        if (d < DV) { gradOut[kt.out * DV + d] = dv[c][e]; }
      }
    }
  }
}

@compute @workgroup_size(WG)
fn keyGradsSel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsSelOf(wid.z, wid.y, wid.x, 0u, P.hpg, false, lid);
}

@compute @workgroup_size(WG)
fn keyGradsSelSplit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  keyGradsSelOf(wid.z, wid.y / P.hpg, wid.x, wid.y % P.hpg, 1u, true, lid);
}
