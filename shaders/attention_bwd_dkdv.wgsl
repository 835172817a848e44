// Dense causal attention, backward part 2: dK and dV per key, key-outer (runs after the dQ pass,
// which wrote delta = rowsum(dO ∘ O)), on the shared machinery of attention_keys.wgsl (after
// attention_common.wgsl, attention_bwd_common.wgsl, attention_dense_log2.wgsl: P in log2 units). A workgroup owns
// KB = WG/NS consecutive keys of one (batch b, group g) and visits the query rows of every t ≥ its
// first key in ascending order; query t reads key s iff t ≥ s.
// backwardDkDvSplit runs one workgroup per head instead of per group (hpg times the workgroups:
// with B = 1 and few groups the group-wide grid left most of a GPU idle, 64 workgroups for
// m7c-125m on the H200), each writing its head's part to gradK, gradV = parts [B,T,G,hpg,·];
// attention_sum_heads.wgsl then adds a key's hpg parts, heads ascending, into the gradients.
// Bindings: 1 q, 2 k, 3 v, 4 lse, 5 dout, 6 delta, 7 gradK, 8 gradV.

fn reads(key: u32, t: u32) -> bool {
  return t >= key;
}

@compute @workgroup_size(WG)
fn backwardDkDv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let first = wid.x * KB;
  let kt = beginKeys(wid.z, wid.y, P.T, first, min(first + KB, P.T), lid);
  readRange(wid.z, wid.y, kt, first, P.T, P.hpg, lid);
  storeKeyGrads(kt);
}

@compute @workgroup_size(WG)
fn backwardDkDvSplit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let first = wid.x * KB;
  let g = wid.y / P.hpg;
  let m = wid.y % P.hpg;
  var kt = beginKeys(wid.z, g, P.T, first, min(first + KB, P.T), lid);
  kt.h0 = m;
  kt.hn = 1u;
  kt.out = kt.row * P.hpg + m;
  readRange(wid.z, g, kt, first, P.T, 1u, lid);
  storeKeyGrads(kt);
}
