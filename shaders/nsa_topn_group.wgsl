// Top-n selection of one query row by a whole workgroup (after nsa_topn.wgsl, whose isNan,
// topnScore, topnWrite and the scan's own tests — topnForced, topnRem, topnAfter, topnChosen — it
// uses, so both forms decide alike by construction; the including file declares WG lanes): the
// GPU decode's selectBlocks (decode_select_split.wgsl), where lane 0 running topnSelect alone made
// ~13 passes over 512 blocks at T = 32k, l′ = 64. It writes exactly topnSelect's selection
// (docs/nsa-spec.md "Top-n selection"): forced blocks (0 if forceInit; bt − forceLocal < j ≤ bt)
// always in; the other blocks ranked by (P descending, j ascending), ties to the lower block,
// −0 = +0 (== of floats, as the scan compares), NaN never picked; ascending, −1 padded.
//
// The rem picks run as the scan's rem steps, each taking the best candidate strictly after the
// previous pick (lastP, lastJ): every lane finds the best among its blocks j ≡ lane (mod WG) (j
// ascending, strict >: the lower j keeps a tie), then a fixed tree over the lanes keeps the better
// of two (P greater, or P equal and j lower). That order is total on the non-NaN candidates, so
// the tree's winner is the scan's pick whatever WG is. Then each lane takes a contiguous run of
// blocks, counts the chosen ones (forced, or not NaN and at or before the last pick: the scan's
// final test), and writes them at the count of chosen blocks before its run (the lanes' counts
// summed in lane order); the chosen blocks number #forced + found, and −1 fills the rest.
// Call it in uniform control flow with uniform arguments: it has barriers. The row's scores must
// be visible to every lane (a storage barrier after they were written by other lanes).

var<workgroup> topnP: array<f32, WG>;
var<workgroup> topnJ: array<i32, WG>;
var<workgroup> topnCnt: array<u32, WG>;

// topnSelect(bt, nSel, forceInit, forceLocal, scoreBase, outBase) computed by the workgroup; lane =
// local_invocation_index.
fn topnSelectGroup(lane: u32, bt: u32, nSel: u32, forceInit: bool, forceLocal: u32, scoreBase: u32, outBase: u32) {
  let nb = bt + 1u;
  let fL = forceLocal;
  let rem = topnRem(bt, nSel, forceInit, fL);

  var found = 0u;
  var lastP = 0.0;
  var lastJ = 0u;
  for (var step = 0u; step < rem; step++) {
    var best = -1;
    var bestP = 0.0;
    for (var j = lane; j < nb; j += WG) {
      if (topnForced(j, bt, forceInit, fL)) { continue; }
      let p = topnScore(scoreBase + j);
      if (isNan(p)) { continue; }
      if (topnAfter(p, j, found, lastP, lastJ) && (best < 0 || p > bestP)) { // strict >: ties keep the lower j
        best = i32(j);
        bestP = p;
      }
    }
    topnP[lane] = bestP;
    topnJ[lane] = best;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
      if (lane < s) {
        let k = topnJ[lane + s];
        let q = topnP[lane + s];
        let j = topnJ[lane];
        let p = topnP[lane];
        if (k >= 0 && (j < 0 || q > p || (q == p && k < j))) {
          topnJ[lane] = k;
          topnP[lane] = q;
        }
      }
      workgroupBarrier();
    }
    let w = topnJ[0];
    let wP = topnP[0];
    workgroupBarrier(); // read by every lane before the next step writes lane 0's slot
    // No candidate left (w < 0): the scan stops; found stays, so the remaining steps find none too.
    if (w >= 0) {
      found++;
      lastP = wP;
      lastJ = u32(w);
    }
  }

  let per = (nb + WG - 1u) / WG;
  let j0 = min(nb, lane * per);
  let j1 = min(nb, j0 + per);
  var c = 0u;
  for (var j = j0; j < j1; j++) {
    if (topnChosen(j, bt, forceInit, fL, found, lastP, lastJ, scoreBase)) { c++; }
  }
  topnCnt[lane] = c;
  workgroupBarrier();
  var m = 0u;
  for (var i = 0u; i < lane; i++) { m += topnCnt[i]; }
  for (var j = j0; j < j1; j++) {
    if (topnChosen(j, bt, forceInit, fL, found, lastP, lastJ, scoreBase)) {
      topnWrite(outBase + m, i32(j));
      m++;
    }
  }
  for (var i = topnForcedCount(bt, forceInit, fL) + found + lane; i < nSel; i += WG) { topnWrite(outBase + i, -1); }
}
