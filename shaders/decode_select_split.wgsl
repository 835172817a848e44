// GPU decode, top-n selection of the new query split over many workgroups (after decode_common.wgsl,
// nsa_topn.wgsl, nsa_topn_group.wgsl, nsa_score_row.wgsl and decode_select_rows.wgsl, the
// buffers' accessors), for the single row t = st[0]. The one-workgroup-per-(b, g) form of scoreRow
// left a GPU with B·G busy workgroups (2 of an H100's 132 SMs at B = 1, G = 2) and took 3.5 ms of a
// 7.2 ms token at 32k on an H200 (docs/gpu.md); scoreRow's arithmetic decomposes exactly, so three
// dispatches give its bits (tests/decode/gpu-decode.test.ts checks scores, p_cmp and
// selections against the training kernel nsa_select.wgsl and against selectTopSerial):
// 1. selectDots, one invocation per (b, g, k, m) (m fastest: the group's heads share kc_k; DOTS_WG
//    lanes a workgroup): s_k = q·kc_k by srDot, scoreRow's fma chain (c ascending), into
//    pCmp[(b·H + head)·cap + k] for k < ncmp(t).
// 2. selectSoftmax, one workgroup of SR_WG lanes per (b, head): M = the lanes' maxima of s_k
//    (k ≡ lane mod SR_WG) by srTreeMax; Σ = the lanes' sums of exp((s_k − M)·scale), k ascending,
//    by srTreeSum (scoreRow's partial sums and tree); then p_k = exp((s_k − M)·scale)·(1/Σ) written
//    over s_k (each k read and written by its own lane only). pCmp is the attention scratch
//    [B, H, cap] (cap ≥ Nmax ≥ n), free until the attention runs: the compressed branch's attend
//    (next) takes p_cmp from it as its weights.
// 3. selectBlocks, one workgroup per (b, g): lanes take the selection blocks j ≤ t / l′ in turn,
//    P_j = Σ over heads ascending, then over the compressed blocks k overlapping j ascending, of
//    fma(p_k, overlap(k, j), acc) from 0 — scoreRow's per-j order — into scores[b, g, j]; then
//    (after a storage barrier) the whole workgroup selects with topnSelectGroup
//    (nsa_topn_group.wgsl: the selection of nsa_topn.wgsl's scan, which training's topN and the
//    software adapters' selectTopSerial run, with the picks' argmax over the lanes) into
//    sel[slot + (b·G + g)·nSel + ·].
// No a·b + c is written out (see nsa_score_row.wgsl). Bindings: q [B, H, dk], kc [B, Nmax, G, dk],
// pCmp [B, H, cap] (s_k, then p_cmp), scores [B, G, nBmax], sel (i32).

var<workgroup> tShared: u32;

// selectDots' lanes (SELECT_DOTS_WG of src/kernels/decode.ts, 32: a warp), so B·H·Nmax = 12 × 2,047
// (T = 32k) makes 768 workgroups, more than 4 × an H100's 132 SMs.
override DOTS_WG: u32;

@compute @workgroup_size(DOTS_WG)
fn selectDots(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * DOTS_WG + lane;
  let m = i % P.hpg;
  let r = i / P.hpg;
  let k = r % P.Nmax;
  let bg = r / P.Nmax;
  if (bg >= P.B * P.G || k >= ncmp(st[0])) { return; }
  setGroup(bg);
  pCmp[probRow + m * P.cap + k] = srDot(m, k, P.dk);
}

@compute @workgroup_size(WG)
fn selectSoftmax(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let bh = wid.x + wid.y * nwg.x;
  if (bh >= P.B * P.H) { return; }
  if (lane == 0u) { tShared = st[0]; }
  let n = ncmp(workgroupUniformLoad(&tShared));
  if (n == 0u) { return; }
  let row = bh * P.cap;
  var mx = SR_NEG_BIG;
  for (var k = lane; k < n; k += SR_WG) { mx = max(mx, pCmp[row + k]); }
  let M = srTreeMax(lane, mx);
  var part = 0.0;
  for (var k = lane; k < n; k += SR_WG) { part += exp((pCmp[row + k] - M) * P.scale); }
  let inv = 1.0 / srTreeSum(lane, part);
  for (var k = lane; k < n; k += SR_WG) { pCmp[row + k] = exp((pCmp[row + k] - M) * P.scale) * inv; }
}

@compute @workgroup_size(WG)
fn selectBlocks(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let bg = wid.x + wid.y * nwg.x;
  if (bg >= P.B * P.G) { return; }
  if (lane == 0u) { tShared = st[0]; }
  let t = workgroupUniformLoad(&tShared);
  let bt = t / P.lSel;
  let n = ncmp(t);
  let lf = f32(P.l);
  setGroup(bg);
  // Block k covers [k·d, k·d + l); selection block j covers [j·l′, (j + 1)·l′).
  for (var j = lane; j <= bt; j += WG) {
    let plo = j * P.lSel;
    let phi = plo + P.lSel;
    var k0 = 0u;
    if (plo + 1u > P.l) { k0 = (plo + 1u - P.l + P.d - 1u) / P.d; }
    let k1 = min(n, (phi - 1u) / P.d + 1u);
    var acc = 0.0;
    for (var m = 0u; m < P.hpg; m++) {
      for (var k = k0; k < k1; k++) {
        let lo = k * P.d;
        let ov = f32(min(lo + P.l, phi) - max(lo, plo)) / lf;
        acc = fma(pCmp[probRow + m * P.cap + k], ov, acc);
      }
    }
    scores[sRow + j] = acc;
  }
  storageBarrier(); // the top-n's lanes read scores other lanes wrote
  topnSelectGroup(lane, bt, P.nSel, P.forceInit != 0u, P.forceLocal, sRow, P.slot + bg * P.nSel);
}
