// The token held by slot m of query (b, t) (docs/dsa-spec.md section 5), shared by the indexer
// loss and backward: in the warm-up (P.dense = 1) slot m is token m for m ≤ t (width T); in the
// sparse phase slot m is sel[b, t, 0, m] (width k; sel [B, T, G, k], every group's row equal).
// −1: no token.

fn slotToken(b: u32, t: u32, m: u32) -> i32 {
  if (P.dense == 1u) { return select(-1, i32(m), m <= t); }
  return sel[(b * P.T + t) * P.G * P.topK + m];
}
