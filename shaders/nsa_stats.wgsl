// Cheap per-step NSA statistics, written to one small u32 buffer:
//   [0..3)  mean gate per branch (cmp, sel, win), f32 bits, over all B·T·H (0 when empty)
//   [3]     invalid selection rows (must stay 0)
//   [4 + 2c], [5 + 2c]  key rows read by branch c (cmp, sel, win), the low and high u32 of a 64-bit
//           sum over every row (b, t, g) of the count the branch's forward kernel wrote for it
//           (its counting entry point: the keys whose score the group's first head computed)
//   [10 + k] histogram of block distance k = bt − j over every selected j (0 ≤ j ≤ bt) of every
//           (b, t, g); distances ≥ maxDistance land in the last bucket, k = maxDistance
// A row (b, t, g) is invalid unless: its first take = min(nSel, bt + 1) entries are blocks in
// [0, bt], strictly ascending (so distinct), they include every forced block (0 if forceInit;
// bt − forceLocal < j ≤ bt), and the other nSel − take entries are −1.
// Integer counters use u32 atomics: order-independent, so deterministic. A 64-bit sum adds each
// workgroup's part to the low word and carries 1 into the high word when that add wraps: the number
// of wraps is floor(total / 2³²) in any order. The gate means are fixed
// order reductions (strided per invocation, then a tree).
//   resetAndGates: one workgroup per branch; workgroup 0 also zeroes the counters.
//   checkSelection: one invocation per row; workgroup-local histogram and key sums, then one global
//                   atomic per nonzero bucket and per branch.
// Bindings: resetAndGates: stats, gates;  checkSelection: stats, sel, readsCmp, readsSel, readsWin
// (u32 [B,T,G] each).
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 256u; // a power of two
const HEAD: u32 = 10u; // words before the histogram
const INVALID: u32 = 3u;
const READS: u32 = 4u; // the first branch's low word
override HIST: u32 = 1u; // maxDistance + 1

var<workgroup> part: array<f32, WG>;
var<workgroup> hist: array<atomic<u32>, HIST>;
var<workgroup> bad: atomic<u32>;
// Per branch, the workgroup's rows' keys: ≤ WG · T each, no wrap while T < 2²⁴ (the wrapper checks).
var<workgroup> reads: array<atomic<u32>, 3>;

@compute @workgroup_size(WG)
fn resetAndGates(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = wid.x;
  if (c == 0u) {
    for (var w = INVALID + lid; w < P.words; w += WG) { atomicStore(&stats[w], 0u); }
  }
  var s = 0.0;
  for (var x = lid; x < P.nGates; x += WG) { s += gates[3u * x + c]; }
  part[lid] = s;
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid < stride) { part[lid] += part[lid + stride]; }
  }
  if (lid == 0u) {
    let mean = select(0.0, part[0] / f32(P.nGates), P.nGates > 0u);
    atomicStore(&stats[c], bitcast<u32>(mean));
  }
}

// True when the row's selection breaks a rule; histogram entries go to the workgroup's buckets.
fn checkRow(row: u32) -> bool {
  let t = (row / P.G) % P.T;
  let bt = t / P.lSel;
  let take = min(P.nSel, bt + 1u);
  let fL = P.forceLocal;
  let fInit = P.forceInit != 0u;
  let nForced = min(fL, bt + 1u) + select(0u, 1u, fInit && fL <= bt);
  var invalid = false;
  var prev = -1;
  var forcedSeen = 0u;
  for (var m = 0u; m < P.nSel; m++) {
    let j = sel[row * P.nSel + m];
    if (j >= 0 && u32(j) <= bt) {
      atomicAdd(&hist[min(bt - u32(j), P.maxDistance)], 1u);
    }
    if (m < take) {
      if (j < 0 || u32(j) > bt || j <= prev) { invalid = true; }
      else if ((fInit && j == 0) || u32(j) + fL > bt) { forcedSeen++; }
      prev = j;
    } else if (j != -1) {
      invalid = true;
    }
  }
  return invalid || forcedSeen != nForced;
}

@compute @workgroup_size(WG)
fn checkSelection(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = (wid.x + wid.y * nwg.x) * WG + lid;
  if (row < P.rows) {
    if (checkRow(row)) { atomicAdd(&bad, 1u); }
    atomicAdd(&reads[0], readsCmp[row]);
    atomicAdd(&reads[1], readsSel[row]);
    atomicAdd(&reads[2], readsWin[row]);
  }
  workgroupBarrier();
  for (var k = lid; k < HIST; k += WG) {
    let v = atomicLoad(&hist[k]);
    if (v > 0u) { atomicAdd(&stats[HEAD + k], v); }
  }
  if (lid == 0u) {
    let v = atomicLoad(&bad);
    if (v > 0u) { atomicAdd(&stats[INVALID], v); }
  }
  if (lid < 3u) {
    let k = atomicLoad(&reads[lid]);
    let lo = READS + 2u * lid;
    if (k > 0u && atomicAdd(&stats[lo], k) > 0xffffffffu - k) { atomicAdd(&stats[lo + 1u], 1u); }
  }
}
