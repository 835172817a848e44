// The selection scores of one query row (docs/nsa-spec.md "Selection scores"), computed by one
// workgroup of SR_WG lanes: shared by the training kernel (nsa_select.wgsl scores: one workgroup
// per (b, t, g); its scoresTiled, nsa_score_tiled.wgsl, repeats scoreRowSerial's arithmetic for 64
// rows at once) and the decode kernels at t = st[0] (decode_select_split.wgsl: its arithmetic split
// over many workgroups; decode_select.wgsl: scoreRowSerial per (b, g) on software adapters), so
// decode selects from the same bits as training by construction. The including file defines, for the
// row it works on (WGSL has no function pointers):
//   fn srQ(m: u32, c: u32) -> f32        component c of q for the group's m-th head
//   fn srKc(k: u32, c: u32) -> f32       component c of compressed key k of the group
//   fn srScore(j: u32) -> f32            the row's score of selection block j
//   fn srSetScore(j: u32, v: f32)
//   fn srProb(m: u32, k: u32, p: f32)    receives p_cmp of head m, block k (decode keeps them)
// and override SR_CH (≥ SR_WG, a power of two): the blocks held in workgroup memory at once.
//
// Per head m of the group, ascending:
//   s_k = q·kc_k, the fma chain over c ascending (unscaled); cached in srS when n ≤ SR_CH, else
//       recomputed in each pass (same chain, same bits);
//   M = max_k s_k: lane maxima (k ≡ lane mod SR_WG), then a fixed tree (exact);
//   Σ = Σ_k exp((s_k − M)·scale): lane partial sums, k ascending, then the fixed tree;
//   p_k = exp((s_k − M)·scale) · (1/Σ), in chunks of SR_CH blocks through srS; each selection
//       block j overlapping the chunk adds p_k · overlap(k, j) by explicit fma, k ascending.
// So per j the additions go heads ascending, then k ascending, starting from 0. No a·b + c is written
// out: a GPU compiler may fuse one into an fma in one kernel and not another (NVIDIA's did).
// Every barrier is in uniform control flow when t is uniform (the callers pass a workgroup-uniform
// t); scores are read and written through storage, so chunks are fenced by storageBarrier.

const SR_WG: u32 = 64u;
const SR_NEG_BIG: f32 = -3.0e38;

override SR_CH: u32;

var<workgroup> srS: array<f32, SR_CH>;
var<workgroup> srRed: array<f32, SR_WG>;

// Fixed-tree max and sum of the lanes' x (every lane gets the result).
fn srTreeMax(lane: u32, x: f32) -> f32 {
  workgroupBarrier();
  srRed[lane] = x;
  workgroupBarrier();
  for (var s = SR_WG / 2u; s > 0u; s >>= 1u) {
    if (lane < s) { srRed[lane] = max(srRed[lane], srRed[lane + s]); }
    workgroupBarrier();
  }
  return srRed[0];
}

fn srTreeSum(lane: u32, x: f32) -> f32 {
  workgroupBarrier();
  srRed[lane] = x;
  workgroupBarrier();
  for (var s = SR_WG / 2u; s > 0u; s >>= 1u) {
    if (lane < s) { srRed[lane] = srRed[lane] + srRed[lane + s]; }
    workgroupBarrier();
  }
  return srRed[0];
}

fn srDot(m: u32, k: u32, dk: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < dk; c++) { s = fma(srQ(m, c), srKc(k, c), s); }
  return s;
}

// s_k from the cache (n ≤ SR_CH) or recomputed.
fn srDotAt(m: u32, k: u32, dk: u32, cached: bool) -> f32 {
  if (cached) { return srS[k]; }
  return srDot(m, k, dk);
}

// Scores of query t: blocks j < nZero are zeroed, then P_j = Σ_m Σ_k p_k · overlap(k, j) for the
// n = ncmp(t) visible compressed blocks (l, d: compression block and stride; lSel: selection block).
fn scoreRow(lane: u32, t: u32, hpg: u32, dk: u32, l: u32, d: u32, lSel: u32, scale: f32, nZero: u32) {
  for (var j = lane; j < nZero; j += SR_WG) { srSetScore(j, 0.0); }
  if (t + 1u < l) { return; }
  let n = (t + 1u - l) / d + 1u;
  let nb = t / lSel + 1u;
  let cached = n <= SR_CH;
  let lf = f32(l);
  for (var m = 0u; m < hpg; m++) {
    workgroupBarrier(); // the previous head's readers of srS are done
    var mx = SR_NEG_BIG;
    for (var k = lane; k < n; k += SR_WG) {
      let s = srDot(m, k, dk);
      if (cached) { srS[k] = s; }
      mx = max(mx, s);
    }
    let M = srTreeMax(lane, mx);
    var part = 0.0;
    for (var k = lane; k < n; k += SR_WG) { part += exp((srDotAt(m, k, dk, cached) - M) * scale); }
    let inv = 1.0 / srTreeSum(lane, part);
    for (var c0 = 0u; c0 < n; c0 += SR_CH) {
      let c1 = min(n, c0 + SR_CH);
      storageBarrier();
      workgroupBarrier();
      for (var k = c0 + lane; k < c1; k += SR_WG) {
        let p = exp((srDotAt(m, k, dk, cached) - M) * scale) * inv;
        srS[k - c0] = p;
        srProb(m, k, p);
      }
      workgroupBarrier();
      // Block k covers [k·d, k·d + l); selection block j covers [j·l′, (j + 1)·l′).
      let jlo = c0 * d / lSel;
      let jhi = min(nb - 1u, ((c1 - 1u) * d + l - 1u) / lSel);
      for (var j = jlo + lane; j <= jhi; j += SR_WG) {
        let plo = j * lSel;
        let phi = plo + lSel;
        var k0 = c0;
        if (plo + 1u > l) { k0 = max(c0, (plo + 1u - l + d - 1u) / d); }
        let k1 = min(c1, (phi - 1u) / d + 1u);
        var acc = srScore(j);
        for (var k = k0; k < k1; k++) {
          let lo = k * d;
          let ov = f32(min(lo + l, phi) - max(lo, plo)) / lf;
          acc = fma(srS[k - c0], ov, acc);
        }
        srSetScore(j, acc);
      }
    }
  }
  storageBarrier();
  workgroupBarrier();
}

// scoreRow's arithmetic by one invocation, for software adapters (SwiftShader runs a workgroup's
// barriers as coroutine switches, which made the 64-lane version about 10 times slower there): the
// same dot chains, the lane partial sums (k ≡ lane mod SR_WG, ascending) and the same fixed tree over
// them, the same p_k and the same per-j order of fmas. SwiftShader gives the same bits for both; a
// GPU compiler may schedule them differently (NVIDIA's did, by an ulp), so each adapter runs one of
// them in training and decode alike (nsa-select.ts, decode.ts). No workgroup memory, no barrier.
fn scoreRowSerial(t: u32, hpg: u32, dk: u32, l: u32, d: u32, lSel: u32, scale: f32, nZero: u32) {
  for (var j = 0u; j < nZero; j++) { srSetScore(j, 0.0); }
  if (t + 1u < l) { return; }
  let n = (t + 1u - l) / d + 1u;
  let nb = t / lSel + 1u;
  let lf = f32(l);
  var part: array<f32, SR_WG>;
  for (var m = 0u; m < hpg; m++) {
    var M = SR_NEG_BIG;
    for (var k = 0u; k < n; k++) { M = max(M, srDot(m, k, dk)); }
    for (var lane = 0u; lane < SR_WG; lane++) {
      var s = 0.0;
      for (var k = lane; k < n; k += SR_WG) { s += exp((srDot(m, k, dk) - M) * scale); }
      part[lane] = s;
    }
    for (var w = SR_WG / 2u; w > 0u; w >>= 1u) {
      for (var lane = 0u; lane < w; lane++) { part[lane] = part[lane] + part[lane + w]; }
    }
    let inv = 1.0 / part[0];
    for (var k = 0u; k < n; k++) {
      let p = exp((srDot(m, k, dk) - M) * scale) * inv;
      srProb(m, k, p);
      // Block k covers [k·d, k·d + l): selection blocks floor(k·d / l′) … floor((k·d + l − 1) / l′).
      let lo = k * d;
      let hi = lo + l;
      for (var j = lo / lSel; j <= min(nb - 1u, (hi - 1u) / lSel); j++) {
        let ov = f32(min(hi, (j + 1u) * lSel) - max(lo, j * lSel)) / lf;
        srSetScore(j, fma(p, ov, srScore(j)));
      }
    }
  }
}
