// DSA token top-k of one row (docs/dsa-spec.md section 3), shared by the training kernel
// (dsa_topk.wgsl, a row per query of scores [B, T, T]) and the decoder's (decode_dsa.wgsl, the one
// row of the new query): a radix select. Scores map to u32 keys whose order is the scores' order
// (−0 as +0, so they tie); 32 counting passes, most significant bit first, find τ, the take-th
// largest key (the largest τ with #{key ≥ τ} ≥ take); one ascending pass in chunks of WG tokens then
// keeps every key > τ and the first take − #{key > τ} keys equal to τ, and writes each kept token at
// its rank (workgroup prefix sums). Integer counts only: the result does not depend on WG and has
// the same bits on every run. NaN scores are never picked (the row comes out short).
// The including file declares WG (≤ MAX_WG lanes) and binds `scores` (f32), `sel` (i32) and a
// uniform P with fields G and topK.

const MAX_WG: u32 = 64u;
var<workgroup> red: array<u32, MAX_WG>;
var<workgroup> scanBuf: array<u32, MAX_WG>;

fn isNan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

// Order-preserving key: larger score → larger key; −0 and +0 give the same key.
fn orderKey(v: f32) -> u32 {
  var u = bitcast<u32>(v);
  if ((u & 0x7fffffffu) == 0u) { u = 0u; }
  return select(u | 0x80000000u, ~u, (u & 0x80000000u) != 0u);
}

// Workgroup sum of x (integers). Every lane calls it.
fn wgSum(lid: u32, x: u32) -> u32 {
  workgroupBarrier(); // the previous sum is consumed
  red[lid] = x;
  for (var o = WG / 2u; o > 0u; o /= 2u) {
    workgroupBarrier();
    if (lid < o) { red[lid] += red[lid + o]; }
  }
  workgroupBarrier();
  return red[0];
}

// Inclusive prefix sum of x over the lanes (Hillis–Steele); the total is scanBuf[WG − 1] until
// the next call.
fn inclusiveScan(lid: u32, x: u32) -> u32 {
  workgroupBarrier();
  scanBuf[lid] = x;
  for (var o = 1u; o < WG; o *= 2u) {
    workgroupBarrier();
    let y = select(0u, scanBuf[max(lid, o) - o], lid >= o);
    workgroupBarrier();
    scanBuf[lid] += y;
  }
  workgroupBarrier();
  return scanBuf[lid];
}

// #{s < n, score not NaN, key > th} (strict) or key ≥ th.
fn countKeys(lid: u32, base: u32, n: u32, th: u32, strict: bool) -> u32 {
  var c = 0u;
  for (var s = lid; s < n; s += WG) {
    let v = scores[base + s];
    if (isNan(v)) { continue; }
    let key = orderKey(v);
    if (key > th || (!strict && key == th)) { c++; }
  }
  return wgSum(lid, c);
}

// Token `token` into slot m of every group's row: sel[selBase + g·k + m].
fn writeToken(selBase: u32, m: u32, token: i32) {
  for (var g = 0u; g < P.G; g++) { sel[selBase + g * P.topK + m] = token; }
}

// The top-k of the n candidates scores[base … base + n) (tokens 0 … n − 1) into sel[selBase …]
// (the rows of the P.G groups, P.topK slots each): ascending, −1 padded. Every lane calls it, in
// uniform control flow (n uniform).
fn topKRow(lid: u32, base: u32, n: u32, selBase: u32) {
  let take = min(P.topK, countKeys(lid, base, n, 0u, false));
  var tau = 0u;
  for (var bit = 0u; bit < 32u; bit++) {
    let cand = tau | (0x80000000u >> bit);
    if (countKeys(lid, base, n, cand, false) >= take) { tau = cand; }
  }
  let need = take - countKeys(lid, base, n, tau, true); // ties at τ to keep, lowest tokens first
  var tiesBefore = 0u;
  var written = 0u;
  let chunks = (n + WG - 1u) / WG;
  for (var c = 0u; c < chunks; c++) {
    let s = c * WG + lid;
    var above = false;
    var tie = false;
    if (s < n) {
      let v = scores[base + s];
      if (!isNan(v)) {
        let key = orderKey(v);
        above = key > tau;
        tie = key == tau;
      }
    }
    let tieRank = inclusiveScan(lid, select(0u, 1u, tie));
    let ties = scanBuf[WG - 1u];
    let kept = above || (tie && tiesBefore + tieRank <= need);
    let rank = inclusiveScan(lid, select(0u, 1u, kept));
    let keptHere = scanBuf[WG - 1u];
    if (kept) { writeToken(selBase, written + rank - 1u, i32(s)); }
    tiesBefore += ties;
    written += keptHere;
  }
  for (var m = take + lid; m < P.topK; m += WG) { writeToken(selBase, m, -1); }
}
