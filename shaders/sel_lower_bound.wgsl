// The first slot of an ascending selection row sel[base .. base + n) whose entry is ≥ x, −1 padding
// sorting after every entry: a binary search, log2(n) reads. Prepended to the shaders that look a
// block or token up in a row (nsa_reverse_index.wgsl, dsa_index_backward.wgsl), which bind `sel`.
fn selLowerBound(base: u32, n: u32, x: u32) -> u32 {
  var lo = 0u;
  var hi = n;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    let e = sel[base + mid];
    if (e >= 0 && u32(e) < x) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}
