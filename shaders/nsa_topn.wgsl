// Top-n selection of one query row (docs/nsa-spec.md "Top-n selection"), shared by the training
// kernel (nsa_select.wgsl topN: one invocation per (b, t, g) row) and the software adapters' decode
// kernel (decode_select.wgsl selectTopSerial: one invocation per (b, g)); GPUs' decode runs its
// workgroup form, nsa_topn_group.wgsl, which gives the same selection. They bind different buffers
// and WGSL has no function pointers, so each including file defines how a row's scores are read
// and its selection written, by element index in its own buffers:
//   fn topnScore(i: u32) -> f32     the group score P held at element i
//   fn topnWrite(i: u32, j: i32)    element i of the selection := block j (or −1 padding)
//
// Query block bt = floor(t / l′) sees blocks j ≤ bt. Forced blocks (0 if forceInit; bt, …,
// bt − forceLocal + 1) are always in. The other candidates are ranked by (P descending, j
// ascending), a total order: ties go to the lower block. The rem = min(nSel, bt + 1) − #forced
// best are found by rem scans, each taking the best candidate strictly after the previous pick,
// so no per-row array is needed. A final ascending scan writes the forced blocks and every
// candidate at or before the last pick, then −1 padding. NaN scores are never picked (the row
// comes out short, which the stats count as invalid).

fn isNan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

// Block j of query block bt is forced (never a candidate): j = 0 if forceInit, or j > bt − fL
// (written j + fL > bt to stay unsigned). This and the tests below are shared with the workgroup
// form (nsa_topn_group.wgsl).
fn topnForced(j: u32, bt: u32, forceInit: bool, fL: u32) -> bool { return (forceInit && j == 0u) || j + fL > bt; }

// The picks to make after the forced blocks: min(nSel, bt + 1) − #forced (≥ 0: nSel ≥ forceInit +
// forceLocal, and forced blocks are candidates).
fn topnRem(bt: u32, nSel: u32, forceInit: bool, fL: u32) -> u32 {
  let nb = bt + 1u;
  return min(nSel, nb) - topnForcedCount(bt, forceInit, fL);
}

// The number of forced blocks: the local ones, and block 0 when forceInit and not already local.
fn topnForcedCount(bt: u32, forceInit: bool, fL: u32) -> u32 {
  return min(fL, bt + 1u) + select(0u, 1u, forceInit && fL <= bt);
}

// Candidate (p, j) ranks strictly after the last pick (lastP, lastJ) — any does before the first.
fn topnAfter(p: f32, j: u32, found: u32, lastP: f32, lastJ: u32) -> bool {
  return found == 0u || p < lastP || (p == lastP && j > lastJ);
}

// The final test: forced, or (a pick was made) not NaN and at or before the last pick.
fn topnChosen(j: u32, bt: u32, forceInit: bool, fL: u32, found: u32, lastP: f32, lastJ: u32, scoreBase: u32) -> bool {
  if (topnForced(j, bt, forceInit, fL)) { return true; }
  if (found == 0u) { return false; }
  let p = topnScore(scoreBase + j);
  return !isNan(p) && (p > lastP || (p == lastP && j <= lastJ));
}

// The selection of query block bt whose scores P[j] are topnScore(scoreBase + j), j = 0 … bt,
// written ascending to topnWrite(outBase + m), m = 0 … nSel − 1.
fn topnSelect(bt: u32, nSel: u32, forceInit: bool, forceLocal: u32, scoreBase: u32, outBase: u32) {
  let nb = bt + 1u;
  let fL = forceLocal;
  let rem = topnRem(bt, nSel, forceInit, fL);

  var found = 0u;
  var lastP = 0.0;
  var lastJ = 0u;
  for (var step = 0u; step < rem; step++) {
    var best = -1;
    var bestP = 0.0;
    for (var j = 0u; j < nb; j++) {
      if (topnForced(j, bt, forceInit, fL)) { continue; }
      let p = topnScore(scoreBase + j);
      if (isNan(p)) { continue; }
      if (topnAfter(p, j, found, lastP, lastJ) && (best < 0 || p > bestP)) { // strict >: ties keep the lower j
        best = i32(j);
        bestP = p;
      }
    }
    if (best < 0) { break; }
    found++;
    lastP = bestP;
    lastJ = u32(best);
  }

  var m = 0u;
  for (var j = 0u; j < nb && m < nSel; j++) {
    if (topnChosen(j, bt, forceInit, fL, found, lastP, lastJ, scoreBase)) {
      topnWrite(outBase + m, i32(j));
      m++;
    }
  }
  for (; m < nSel; m++) { topnWrite(outBase + m, -1); }
}
