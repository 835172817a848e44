// DSA lightning-indexer scores (docs/dsa-spec.md section 2), one invocation per element of
// scores [B, T, T]: for s ≤ t
//   scores[b, t, s] = scale · Σ_j wI[b, t, j] · ReLU(qI[b, t, j] · kI[b, s])     (scale = 1/√(H_I·d_I))
// summed over the indexer heads j in ascending order (explicit fma), and 0 for s > t (never read).
// qI [B, T, H_I, d_I], kI [B, T, d_I] (one key per token, shared by the heads), wI [B, T, H_I].

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn indexScores(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.total) { return; }
  let s = i % P.T;
  let row = i / P.T; // b·T + t
  let t = row % P.T;
  if (s > t) {
    scores[i] = 0.0;
    return;
  }
  let kOff = (row - t + s) * P.indexDim;
  var acc = 0.0;
  for (var j = 0u; j < P.indexHeads; j++) {
    let qOff = (row * P.indexHeads + j) * P.indexDim;
    var a = 0.0;
    for (var e = 0u; e < P.indexDim; e++) { a = fma(qI[qOff + e], kI[kOff + e], a); }
    acc = fma(wI[row * P.indexHeads + j], max(a, 0.0), acc);
  }
  scores[i] = P.scale * acc;
}
