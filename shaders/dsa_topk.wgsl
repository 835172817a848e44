// DSA token top-k (docs/dsa-spec.md section 3): one workgroup per query row (b, t) of
// scores [B, T, T] picks take = min(k, #non-NaN candidates s ≤ t) tokens by descending score,
// ties to the lower token, and writes them ascending, −1 padded, to sel [B, T, G, k] (the same row
// for every group g).
//
// A radix select, not NSA's rescan per pick (O(k·T) a row): scores map to u32 keys whose order is
// the scores' order (−0 as +0, so they tie); 32 counting passes, most significant bit first, find
// τ, the take-th largest key (the largest τ with #{key ≥ τ} ≥ take); one ascending pass in chunks
// of WG tokens then keeps every key > τ and the first take − #{key > τ} keys equal to τ, and writes
// each kept token at its rank (workgroup prefix sums). Integer counts only: the result does not
// depend on WG (64 lanes on a GPU, 1 on software adapters where barriers are slow) and has the same
// bits on every run. NaN scores are never picked (the row comes out short).
// The row's select is topKRow (dsa_topk_row.wgsl, shared with the decoder).

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn topK(
  @builtin(local_invocation_id) lidv: vec3<u32>,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  let row = wid.x + wid.y * nwg.x; // b·T + t
  if (row >= P.rows) { return; }
  let t = row % P.T;
  topKRow(lidv.x, row * P.T, t + 1u, row * P.G * P.topK);
}
