// Selection scores, query-tiled (after nsa_score_row.wgsl and nsa_select.wgsl: its uniform, its
// blockScores, q and kc, its row accessors): scoreRowSerial's arithmetic, in its order, for WG
// consecutive queries of one (b, g) per workgroup, one invocation per query, the compressed keys
// staged TK at a time in workgroup memory where every invocation reads them (the 64-lane scoreRow
// reads each row's keys anew: at T = 16,384 it was 27 ms of NSA's 162 on an H200). Per head m of the
// group, three passes over the row's ncmp(t) blocks, recomputing s_k by the same fma chain (c
// ascending) in each: the max M; the 64 lane partial sums, part[k mod 64] += exp((s_k − M)·scale) for
// k ascending (each part the same sequence as scoreRowSerial's lane loop), then its fixed tree; then
// p_k = exp((s_k − M)·scale)·(1/Σ) added by fma into each overlapping block's score, k ascending.
// So each score has scoreRow's and scoreRowSerial's order: heads ascending, then k ascending, from 0.
// Invocations past the last query shadow it and write nothing.

override SDK: u32;   // = dk: the staged key width, a constant so the dot's loop unrolls
override TK: u32;    // compressed keys per staged tile, TK·SDK floats ≤ 16 KiB

const MAX_DK: u32 = 128u;

var<workgroup> kcTile: array<f32, TK * SDK>;

// Stages compressed keys k0 .. k0 + TK − 1 of (b, g) (zeros past N), once the previous tile is
// consumed; all of the workgroup calls it.
fn stageKc(b: u32, g: u32, k0: u32, lid: u32) {
  workgroupBarrier();
  for (var x = lid; x < TK * SDK; x += WG) {
    let k = k0 + x / SDK;
    var v = 0.0;
    if (k < P.N) { v = kc[((b * P.N + k) * P.G + g) * SDK + x % SDK]; }
    kcTile[x] = v;
  }
  workgroupBarrier();
}

fn tileDot(qv: ptr<function, array<f32, MAX_DK>>, kk: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < SDK; c++) { s = fma((*qv)[c], kcTile[kk * SDK + c], s); }
  return s;
}

// wid = (query tile, g, b).
@compute @workgroup_size(WG)
fn scoresTiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let b = wid.z;
  let g = wid.y;
  let live = wid.x * WG + lid < P.T;
  let t = min(wid.x * WG + lid, P.T - 1u);
  let tLast = min(wid.x * WG + WG - 1u, P.T - 1u);
  var nEnd = 0u;   // compressed blocks the workgroup's last query sees: the tiles' bound (uniform)
  if (tLast + 1u >= P.l) { nEnd = (tLast + 1u - P.l) / P.d + 1u; }
  var n = 0u;
  if (t + 1u >= P.l) { n = (t + 1u - P.l) / P.d + 1u; }
  let nb = t / P.lSel + 1u;
  let hpg = P.H / P.G;
  let lf = f32(P.l);
  setRow((b * P.T + t) * P.G + g);
  if (live) { for (var j = 0u; j < P.nB; j++) { srSetScore(j, 0.0); } }

  var qv: array<f32, MAX_DK>;
  var part: array<f32, SR_WG>;
  for (var m = 0u; m < hpg; m++) {
    for (var c = 0u; c < SDK; c++) { qv[c] = srQ(m, c); }
    var M = SR_NEG_BIG;
    for (var k0 = 0u; k0 < nEnd; k0 += TK) {
      stageKc(b, g, k0, lid);
      for (var kk = 0u; kk < min(TK, n - min(n, k0)); kk++) { M = max(M, tileDot(&qv, kk)); }
    }
    for (var y = 0u; y < SR_WG; y++) { part[y] = 0.0; }
    for (var k0 = 0u; k0 < nEnd; k0 += TK) {
      stageKc(b, g, k0, lid);
      for (var kk = 0u; kk < min(TK, n - min(n, k0)); kk++) {
        let k = k0 + kk;
        part[k % SR_WG] += exp((tileDot(&qv, kk) - M) * P.scale);
      }
    }
    for (var w = SR_WG / 2u; w > 0u; w >>= 1u) {
      for (var y = 0u; y < w; y++) { part[y] = part[y] + part[y + w]; }
    }
    let inv = 1.0 / part[0];
    for (var k0 = 0u; k0 < nEnd; k0 += TK) {
      stageKc(b, g, k0, lid);
      for (var kk = 0u; kk < min(TK, n - min(n, k0)); kk++) {
        let k = k0 + kk;
        let p = exp((tileDot(&qv, kk) - M) * P.scale) * inv;
        // Block k covers [k·d, k·d + l): selection blocks floor(k·d / l′) … floor((k·d + l − 1) / l′).
        let lo = k * P.d;
        let hi = lo + P.l;
        if (live) {
          for (var j = lo / P.lSel; j <= min(nb - 1u, (hi - 1u) / P.lSel); j++) {
            let ov = f32(min(hi, (j + 1u) * P.lSel) - max(lo, j * P.lSel)) / lf;
            srSetScore(j, fma(p, ov, srScore(j)));
          }
        }
      }
    }
  }
}
