// Reverse index of the NSA selection, for the atomic-free dK/dV of the selected branch: for each
// (b, g, block j) the ascending list of queries t that selected j. Count, prefix-sum, fill:
//   countQueries: one workgroup per (j, g, b) — wid = (j, g, b) — counts the t ≥ j·lSel whose
//                 selection row holds j; counts[r], r = (b·G + g)·nB + j.
//   scanCounts:   one workgroup, exclusive prefix sum over r in order: offsets[0..R] (R = B·G·nB,
//                 offsets[R] = total), copied into the head of `queries` as well.
//   fillQueries:  wid = (j, g, b) again, scans t in ascending chunks of WG; a workgroup prefix sum
//                 of the "selected" flags gives each t its rank, so the list comes out ascending:
//                 queries[R + 1 + offsets[r] + rank] = t.
// Integer sums only; every list is written by one workgroup in t order: same bits on every run.
// Selection rows are [B,T,G,nSel] int32, ascending, −1 padded (as docs/nsa-spec.md).
// Bindings (0 is the uniform) per entry point —
//   countQueries: 1 sel, 2 counts    scanCounts: 1 countsIn, 2 offsets, 3 head    fillQueries: 1 sel, 2 queries

const WG: u32 = 64u;
var<workgroup> scan: array<u32, WG>;

// Whether the selection row of (b, t, g) holds block j (rows ascend, padding at the end), by binary
// search (sel_lower_bound.wgsl): log2(nSel) reads instead of up to nSel, since DSA's rows are its
// top-k tokens (thousands) and every (t, j) pair asks.
fn selects(b: u32, t: u32, g: u32, j: u32) -> bool {
  let base = ((b * P.T + t) * P.G + g) * P.nSel;
  let m = selLowerBound(base, P.nSel, j);
  return m < P.nSel && sel[base + m] == i32(j);
}

// Inclusive prefix sum of x over the workgroup (Hillis–Steele; fixed order, integers).
fn inclusiveScan(lid: u32, x: u32) -> u32 {
  workgroupBarrier();   // the previous scan is consumed
  scan[lid] = x;
  for (var o = 1u; o < WG; o *= 2u) {
    workgroupBarrier();
    let y = select(0u, scan[max(lid, o) - o], lid >= o);
    workgroupBarrier();
    scan[lid] += y;
  }
  workgroupBarrier();
  return scan[lid];
}

@compute @workgroup_size(WG)
fn countQueries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wid.x;
  var n = 0u;
  for (var t = j * P.lSel + lid; t < P.T; t += WG) {
    if (selects(wid.z, t, wid.y, j)) { n++; }
  }
  let total = inclusiveScan(lid, n);
  if (lid == WG - 1u) { counts[(wid.z * P.G + wid.y) * P.nB + j] = i32(total); }
}

@compute @workgroup_size(WG)
fn scanCounts(@builtin(local_invocation_index) lid: u32) {
  var carry = 0u;
  for (var base = 0u; base < P.R; base += WG) {
    let r = base + lid;
    var c = 0u;
    if (r < P.R) { c = u32(countsIn[r]); }
    let incl = inclusiveScan(lid, c);
    if (r < P.R) {
      offsets[r] = i32(carry + incl - c);
      head[r] = i32(carry + incl - c);
    }
    carry += scan[WG - 1u];
  }
  if (lid == 0u) {
    offsets[P.R] = i32(carry);
    head[P.R] = i32(carry);
  }
}

@compute @workgroup_size(WG)
fn fillQueries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wid.x;
  let base = P.R + 1u + u32(queries[(wid.z * P.G + wid.y) * P.nB + j]);
  var carry = 0u;
  for (var t0 = j * P.lSel; t0 < P.T; t0 += WG) {
    let t = t0 + lid;
    var f = 0u;
    if (t < P.T && selects(wid.z, t, wid.y, j)) { f = 1u; }
    let incl = inclusiveScan(lid, f);
    if (f == 1u) { queries[base + carry + incl - 1u] = i32(t); }
    carry += scan[WG - 1u];
  }
}
