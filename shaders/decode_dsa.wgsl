// GPU decode of a DSA layer (docs/dsa-spec.md sections 2, 3 and 7), for the new query t = st[0] of
// each of the B sequences, after the indexer projections (qI [B, H_I, d_I] and the new key
// kNew [B, d_I], both rotated by ropeQ; wI [B, H_I]). The cache kI [B, cap, d_I] holds the rotated
// indexer key of every position. Then the main attention over the selected tokens is
// decode_attend.wgsl's SEL branch with one-token blocks (lSel = 1, nSel = k), which counts its
// min(k, t + 1) K/V rows per group.
//
// appendIndexKey  one invocation per (b, e): kI[b, t, e] = kNew[b, e].
// indexScoresAt   one workgroup of WG lanes per (b, chunk of WG tokens), P.splits chunks per b:
//                 lane s ≤ t writes scores[b, s] = iscale · Σ_j wI[b, j] · ReLU(qI[b, j] · kI[b, s])
//                 (heads ascending, explicit fma: dsa_index_scores.wgsl's sum, so the same inputs
//                 give the same bits), and the chunk's count of indexer key rows read goes to
//                 cnt[b·splits + chunk] (a fixed tree sum; 0 for a chunk past t).
// topKAt          one workgroup per b: lane 0 sums the chunks' counts in ascending order into
//                 ireads[rslot + b] (the t + 1 indexer rows the layer read for sequence b), then the
//                 lanes run topKRow (dsa_topk_row.wgsl, the training kernel's select) on
//                 scores[b, 0 … t] into sel[slot + (b·G + g)·k + ·]: ascending, ties to the lower
//                 token, −1 padded, the same row for every group. Integer counts only: deterministic.
// Bindings: st u32 [4], qI, wI, kNew, kI, scores [B, cap] (f32); cnt, ireads (u32); sel (i32).

override WG: u32 = 64;

fn linearId(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

@compute @workgroup_size(WG)
fn appendIndexKey(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linearId(gid, nwg);
  if (i >= P.B * P.dI) { return; }
  let e = i % P.dI;
  let b = i / P.dI;
  kI[(b * P.cap + st[0]) * P.dI + e] = kNew[i];
}

@compute @workgroup_size(WG)
fn indexScoresAt(
  @builtin(local_invocation_id) lidv: vec3<u32>,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  let i = wid.x + wid.y * nwg.x;
  if (i >= P.B * P.splits) { return; }
  let lid = lidv.x;
  let chunk = i % P.splits;
  let b = i / P.splits;
  let t = st[0];
  let s = chunk * WG + lid;
  var read = 0u;
  if (s <= t && s < P.cap) {
    let kOff = (b * P.cap + s) * P.dI;
    var acc = 0.0;
    for (var j = 0u; j < P.HI; j++) {
      let qOff = (b * P.HI + j) * P.dI;
      var a = 0.0;
      for (var e = 0u; e < P.dI; e++) { a = fma(qI[qOff + e], kI[kOff + e], a); }
      acc = fma(wI[b * P.HI + j], max(a, 0.0), acc);
    }
    scores[b * P.cap + s] = P.iscale * acc;
    read = 1u;
  }
  let n = wgSum(lid, read);
  if (lid == 0u) { cnt[i] = n; }
}

var<workgroup> tShared: u32;

@compute @workgroup_size(WG)
fn topKAt(
  @builtin(local_invocation_id) lidv: vec3<u32>,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  let b = wid.x + wid.y * nwg.x;
  if (b >= P.B) { return; }
  let lid = lidv.x;
  if (lid == 0u) {
    tShared = st[0];
    var n = 0u;
    for (var c = 0u; c < P.splits; c++) { n += cnt[b * P.splits + c]; }
    ireads[P.rslot + b] = n;
  }
  let t = workgroupUniformLoad(&tShared);
  topKRow(lid, b * P.cap, t + 1u, P.slot + b * P.G * P.topK);
}
