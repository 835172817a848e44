// GPU decode, top-n selection of the new query (after decode_common.wgsl): one workgroup of WG lanes
// per (b, g) (workgroup_id, so every barrier is in uniform control flow), the arithmetic of
// shaders/nsa_select.wgsl for the single row t = st[0] — same inputs, same bits
// (tests/decode/gpu-decode.test.ts checks scores and selections against it).
// 1. Each head's p_cmp over the n = ncmp(t) visible compressed blocks, in the head's row of the
//    attention scratch (scratch[(b·H + head)·cap + k]: free until the attention kernels run;
//    cap ≥ Nmax ≥ n). Lanes take blocks in turn (k to lane k % WG) and write s_k = q·kc_k —
//    the fma chain over c ascending, unscaled, computed for four or two heads at once
//    (component-wise, the same chain per head) so each key row is loaded once for them. Then per
//    head, ascending: the max by a fixed tree (exact); e_k = exp((s_k − max)·scale) in place; the
//    sum by lane 0 alone, k ascending (`sum += e_k`, as nsa_select.wgsl); p_k = e_k · (1 / sum).
// 2. Scores: lanes take selection blocks j < nb = floor(t / l′) + 1 in turn; each adds, from 0,
//    heads ascending and within a head the blocks k < n that overlap j ascending, p_k · overlap(k, j)
//    by explicit fma — per j the operations of nsa_select.wgsl — into scores[b, g, j]. No a·b + c is
//    written out anywhere: a GPU compiler may fuse one into an fma in one kernel and not in the
//    other (NVIDIA's Vulkan driver did: one ulp apart).
// 3. Lane 0 (after a storage barrier): the forced blocks and the best rem = min(nSel, nb) − #forced
//    others by (P descending, j ascending), by the scan of nsa_topn.wgsl that nsa_select.wgsl's
//    topN runs too, written ascending and −1 padded to sel[slot + (b·G + g)·nSel + ·].
// Bindings: q [B, H, dk], kc [B, Nmax, G, dk], scratch [B, H, cap], scores [B, G, nBmax] (scratch),
// sel (i32).

// The top-n scan's access to this kernel's buffers (see nsa_topn.wgsl).
fn topnScore(i: u32) -> f32 { return scores[i]; }
fn topnWrite(i: u32, j: i32) { sel[i] = j; }

// s = q·kc: the fma chain over c ascending, unscaled (the scale enters as (s − max)·scale, as in
// nsa_select.wgsl) — for one head, or component-wise
// for two or four heads (q rows at qo.*) against the one key row at ko, loaded once; unrolled by
// four (on SwiftShader the loop overhead outweighs the fma).
fn cmpDot(qo: u32, ko: u32) -> f32 {
  var s = 0.0;
  var c = 0u;
  for (; c + 4u <= P.dk; c += 4u) {
    s = fma(q[qo + c], kc[ko + c], s);
    s = fma(q[qo + c + 1u], kc[ko + c + 1u], s);
    s = fma(q[qo + c + 2u], kc[ko + c + 2u], s);
    s = fma(q[qo + c + 3u], kc[ko + c + 3u], s);
  }
  for (; c < P.dk; c++) { s = fma(q[qo + c], kc[ko + c], s); }
  return s;
}

fn q2(qo: vec2<u32>, c: u32) -> vec2<f32> { return vec2<f32>(q[qo.x + c], q[qo.y + c]); }

fn cmpDot2(qo: vec2<u32>, ko: u32) -> vec2<f32> {
  var s = vec2<f32>(0.0);
  var c = 0u;
  for (; c + 4u <= P.dk; c += 4u) {
    s = fma(q2(qo, c), vec2<f32>(kc[ko + c]), s);
    s = fma(q2(qo, c + 1u), vec2<f32>(kc[ko + c + 1u]), s);
    s = fma(q2(qo, c + 2u), vec2<f32>(kc[ko + c + 2u]), s);
    s = fma(q2(qo, c + 3u), vec2<f32>(kc[ko + c + 3u]), s);
  }
  for (; c < P.dk; c++) { s = fma(q2(qo, c), vec2<f32>(kc[ko + c]), s); }
  return s;
}

fn q4(qo: vec4<u32>, c: u32) -> vec4<f32> { return vec4<f32>(q[qo.x + c], q[qo.y + c], q[qo.z + c], q[qo.w + c]); }

fn cmpDot4(qo: vec4<u32>, ko: u32) -> vec4<f32> {
  var s = vec4<f32>(0.0);
  var c = 0u;
  for (; c + 4u <= P.dk; c += 4u) {
    s = fma(q4(qo, c), vec4<f32>(kc[ko + c]), s);
    s = fma(q4(qo, c + 1u), vec4<f32>(kc[ko + c + 1u]), s);
    s = fma(q4(qo, c + 2u), vec4<f32>(kc[ko + c + 2u]), s);
    s = fma(q4(qo, c + 3u), vec4<f32>(kc[ko + c + 3u]), s);
  }
  for (; c < P.dk; c++) { s = fma(q4(qo, c), vec4<f32>(kc[ko + c]), s); }
  return s;
}

@compute @workgroup_size(WG)
fn selectTop(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  let bg = wid.x + wid.y * nwg.x;
  if (bg >= P.B * P.G) { return; }
  let g = bg % P.G;
  let b = bg / P.G;
  let t = st[0];
  let n = ncmp(t);
  let bt = t / P.lSel;
  let nb = bt + 1u;
  let base = bg * P.nBmax;
  let head0 = b * P.H + g * P.hpg;

  // 1a. s_k of the group's heads into their rows: four heads at a time, then two, then one.
  var m0 = 0u;
  for (; m0 + 4u <= P.hpg; m0 += 4u) {
    let hs = head0 + m0 + vec4<u32>(0u, 1u, 2u, 3u);
    let ro = hs * P.cap;
    for (var k = lane; k < n; k += WG) {
      let s = cmpDot4(hs * P.dk, ((b * P.Nmax + k) * P.G + g) * P.dk);
      scratch[ro.x + k] = s.x;
      scratch[ro.y + k] = s.y;
      scratch[ro.z + k] = s.z;
      scratch[ro.w + k] = s.w;
    }
  }
  if (m0 + 2u <= P.hpg) {
    let hs = head0 + m0 + vec2<u32>(0u, 1u);
    let ro = hs * P.cap;
    for (var k = lane; k < n; k += WG) {
      let s = cmpDot2(hs * P.dk, ((b * P.Nmax + k) * P.G + g) * P.dk);
      scratch[ro.x + k] = s.x;
      scratch[ro.y + k] = s.y;
    }
    m0 += 2u;
  }
  if (m0 < P.hpg) {
    let h = head0 + m0;
    for (var k = lane; k < n; k += WG) {
      scratch[h * P.cap + k] = cmpDot(h * P.dk, ((b * P.Nmax + k) * P.G + g) * P.dk);
    }
  }
  // 1b. p_cmp of each head.
  for (var m = 0u; m < P.hpg; m++) {
    let row = (head0 + m) * P.cap;
    var mx = NEG_BIG;
    for (var k = lane; k < n; k += WG) { mx = max(mx, scratch[row + k]); }
    let M = reduceMax(lane, mx);
    for (var k = lane; k < n; k += WG) { scratch[row + k] = exp((scratch[row + k] - M) * P.scale); }
    storageBarrier();
    if (lane == 0u) {
      var sum = 0.0;
      for (var k = 0u; k < n; k++) { sum += scratch[row + k]; }
      redF[0] = sum;
    }
    workgroupBarrier();
    let inv = 1.0 / redF[0];
    workgroupBarrier();
    for (var k = lane; k < n; k += WG) { scratch[row + k] = scratch[row + k] * inv; }
  }
  storageBarrier();

  // 2. Scores: block k covers [k·d, k·d + l) and overlaps j's [j·l′, (j + 1)·l′) for
  //    k·d + l > j·l′ and k·d < (j + 1)·l′.
  let lf = f32(P.l);
  for (var j = lane; j < nb; j += WG) {
    let jlo = j * P.lSel;
    let jhi = jlo + P.lSel;
    var k0 = 0u;
    if (jlo + 1u > P.l) { k0 = (jlo + 1u - P.l + P.d - 1u) / P.d; }
    let k1 = min(n, (jhi - 1u) / P.d + 1u);
    var acc = 0.0;
    for (var m = 0u; m < P.hpg; m++) {
      let row = (head0 + m) * P.cap;
      for (var k = k0; k < k1; k++) {
        let lo = k * P.d;
        let ov = f32(min(lo + P.l, jhi) - max(lo, jlo)) / lf;
        acc = fma(scratch[row + k], ov, acc);
      }
    }
    scores[base + j] = acc;
  }
  storageBarrier();
  if (lane != 0u) { return; }

  // 3. Top-n (lane 0): the scan of nsa_topn.wgsl, as nsa_select.wgsl's topN.
  topnSelect(bt, P.nSel, P.forceInit != 0u, P.forceLocal, base, P.slot + bg * P.nSel);
}
