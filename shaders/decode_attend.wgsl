// GPU decode, attention of the new query (after decode_common.wgsl), split over the keys
// (flash-decoding): the keys of each (b, head) in branch P.branch are numbered in order — CMP:
// compressed rows 0 … ncmp(t) − 1; SEL: the positions ≤ t of the selected blocks
// sel[slot + (b·G + g)·nSel + ·], in their (ascending) order; WIN: positions max(0, t − w + 1) … t;
// FULL: positions 0 … t (dense) — and cut into P.splits chunks of ceil(n / splits) consecutive keys
// (the last shorter, some empty when n < splits).
//
// attendPart: one workgroup of WG lanes per (b, head, chunk). SEL, WIN, FULL: lanes take the chunk's
// keys in turn: scores q·k/√dk into the head's scratch row, the chunk's max m by a fixed tree, then
// exp(s − m) into the scratch and their sum l by the same tree; each lane then owns output columns
// and sums p·v over the chunk's keys in ascending order. CMP reuses the selection: decode_select.wgsl,
// dispatched just before, leaves each head's p_cmp — the softmax of q·kc/√dk over the ncmp(t)
// visible blocks, the compressed branch's own weights — in the head's scratch row, so the chunk only
// sums p·v (m = 0, l = 1). The chunk's partial (m, l, keys read, acc[dv]) goes to
// part[((b·H + head)·splits + chunk)·(dv + 3) + ·]; an empty chunk writes (−big, 0, 0, 0…).
//
// attendCombine: one invocation per output (b, head, column), over the chunks in ascending order:
// SEL, WIN, FULL: M = max m_c, out = Σ e^(m_c − M)·acc_c / Σ e^(m_c − M)·l_c (0 when no key);
// CMP: out = Σ acc_c. The group's first head's column 0 writes the keys it read (Σ of its chunks')
// to reads[rslot + (b·G + g)·4 + branch]. Fixed orders throughout: same inputs, same bits.
// The float64 twin is src/reference/decode-attend.ts. Cache rows advance by one per key (the window
// ring wraps).
// SEL with one-token blocks (lSel = 1: DSA's tokens, docs/dsa-spec.md section 7) takes a direct path:
// key ordinal o is the position sel[row + o] (the row's −1 padding is at its end, so the keys are
// its non-negative prefix, found by binary search), the same keys in the same order — same bits —
// without walking all nSel entries per lane.
// Bindings: q [B, H, dk], k / v caches [B, rows, G, dk|dv], scratch [B, H, cap], sel (i32),
// part [B, H, splits, dv + 3], out [B, H, dv], reads (u32).

var<workgroup> redU: array<u32, WG>;

// Key range m of the (b, g) row: positions (or compressed rows) [x, y).
fn keyRange(bg: u32, m: u32, t: u32) -> vec2<u32> {
  switch (P.branch) {
    case 0u: { return vec2<u32>(0u, ncmp(t)); }
    case 1u: {
      let j = sel[P.slot + bg * P.nSel + m];
      if (j < 0) { return vec2<u32>(0u, 0u); }
      let s = u32(j) * P.lSel;
      return vec2<u32>(s, min(s + P.lSel, t + 1u));
    }
    case 2u: { return vec2<u32>(t + 1u - min(P.w, t + 1u), t + 1u); }
    default: { return vec2<u32>(0u, t + 1u); }
  }
}

fn rangeCount() -> u32 { return select(1u, P.nSel, P.branch == SEL); }

// Row `row` of the (b, g) cache, and the row of key position s (the window ring wraps; other caches
// have a row per position).
fn cacheRow(b: u32, row: u32, g: u32) -> u32 { return (b * P.rows + row) * P.G + g; }
fn keyRow(b: u32, s: u32, g: u32) -> u32 { return cacheRow(b, s % P.rows, g); }

fn reduceSum(lane: u32, x: f32, n: u32) -> vec2<f32> {
  redF[lane] = x;
  redU[lane] = n;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      redF[lane] += redF[lane + s];
      redU[lane] += redU[lane + s];
    }
    workgroupBarrier();
  }
  let r = vec2<f32>(redF[0], f32(redU[0]));
  workgroupBarrier();
  return r;
}

// Keys of the (b, g) row in the branch (ordinals 0 … n − 1).
fn keyCount(bg: u32, t: u32) -> u32 {
  var n = 0u;
  for (var m = 0u; m < rangeCount(); m++) {
    let r = keyRange(bg, m, t);
    n += r.y - r.x;
  }
  return n;
}

// One-token selection: the row's keys are the non-negative prefix of its nSel entries.
fn tokenMode() -> bool { return P.branch == SEL && P.lSel == 1u; }
fn tokenCount(bg: u32) -> u32 {
  var lo = 0u;
  var hi = P.nSel;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (sel[P.slot + bg * P.nSel + mid] >= 0) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}

const PART_HEAD: u32 = 3u; // m, l, keys read; then acc[dv]

@compute @workgroup_size(WG)
fn attendPart(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let i = wid.x + wid.y * nwg.x;
  if (i >= P.B * P.H * P.splits) { return; }
  let chunk = i % P.splits;
  let bh = i / P.splits;
  let head = bh % P.H;
  let b = bh / P.H;
  let g = head / P.hpg;
  let bg = b * P.G + g;
  let t = st[0];
  let qo = bh * P.dk;
  let scr = bh * P.cap;
  let nr = rangeCount();
  let tok = tokenMode();
  let selRow = P.slot + bg * P.nSel;
  var n = 0u;
  if (tok) { n = tokenCount(bg); } else { n = keyCount(bg, t); }
  let len = (n + P.splits - 1u) / P.splits;
  let o0 = min(n, chunk * len);
  let o1 = min(n, o0 + len);

  var mx = 0.0;
  var sum = 1.0;
  var nread = o1 - o0;
  if (P.branch != CMP) {
    // Scores of the chunk's keys and their max.
    var m0 = NEG_BIG;
    var off = 0u;
    if (tok) {
      for (var o = o0 + lane; o < o1; o += WG) {
        let ko = keyRow(b, u32(sel[selRow + o]), g) * P.dk;
        var a = 0.0;
        for (var c = 0u; c < P.dk; c++) { a = fma(q[qo + c], k[ko + c], a); }
        let sc = a * P.scale;
        scratch[scr + o] = sc;
        m0 = max(m0, sc);
      }
    }
    for (var m = 0u; m < select(nr, 0u, tok); m++) {
      let r = keyRange(bg, m, t);
      let lo = max(o0, off);
      let hi = min(o1, off + r.y - r.x);
      for (var o = lo + lane; o < hi; o += WG) {
        let ko = keyRow(b, r.x + o - off, g) * P.dk;
        var a = 0.0;
        for (var c = 0u; c < P.dk; c++) { a = fma(q[qo + c], k[ko + c], a); }
        let sc = a * P.scale;
        scratch[scr + o] = sc;
        m0 = max(m0, sc);
      }
      off += r.y - r.x;
    }
    mx = reduceMax(lane, m0);

    // exp(s − max), their sum and the count of keys read.
    // (Each lane revisits the keys it scored: the same loop, so no barrier is needed between.)
    var s0 = 0.0;
    var cnt = 0u;
    off = 0u;
    if (tok) {
      for (var o = o0 + lane; o < o1; o += WG) {
        let e = exp(scratch[scr + o] - mx);
        scratch[scr + o] = e;
        s0 += e;
        cnt++;
      }
    }
    for (var m = 0u; m < select(nr, 0u, tok); m++) {
      let r = keyRange(bg, m, t);
      let lo = max(o0, off);
      let hi = min(o1, off + r.y - r.x);
      for (var o = lo + lane; o < hi; o += WG) {
        let e = exp(scratch[scr + o] - mx);
        scratch[scr + o] = e;
        s0 += e;
        cnt++;
      }
      off += r.y - r.x;
    }
    let S = reduceSum(lane, s0, cnt);
    sum = S.x;
    nread = u32(S.y);
  }
  storageBarrier();

  // Output columns: Σ p·v over the chunk in ascending key order.
  let po = i * (P.dv + PART_HEAD);
  for (var c = lane; c < P.dv; c += WG) {
    var acc = 0.0;
    var off = 0u;
    if (tok) {
      for (var o = o0; o < o1; o++) { acc = fma(scratch[scr + o], v[keyRow(b, u32(sel[selRow + o]), g) * P.dv + c], acc); }
    }
    for (var m = 0u; m < select(nr, 0u, tok); m++) {
      let r = keyRange(bg, m, t);
      let lo = max(o0, off);
      let hi = min(o1, off + r.y - r.x);
      if (lo < hi) {
        var row = (r.x + lo - off) % P.rows;
        for (var o = lo; o < hi; o++) {
          acc = fma(scratch[scr + o], v[cacheRow(b, row, g) * P.dv + c], acc);
          row++;
          if (row == P.rows) { row = 0u; }
        }
      }
      off += r.y - r.x;
    }
    part[po + PART_HEAD + c] = acc;
  }
  if (lane == 0u) {
    let empty = o0 >= o1;
    part[po] = select(mx, NEG_BIG, empty);
    part[po + 1u] = select(sum, 0.0, empty);
    part[po + 2u] = f32(nread);
  }
}

@compute @workgroup_size(WG)
fn attendCombine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.B * P.H * P.dv) { return; }
  let c = i % P.dv;
  let bh = i / P.dv;
  let head = bh % P.H;
  let b = bh / P.H;
  let stride = P.dv + PART_HEAD;
  let p0 = bh * P.splits * stride;
  _ = st[0]; // bound in every entry point of the kernel's binding list
  var acc = 0.0;
  var nread = 0.0;
  if (P.branch == CMP) {
    for (var s = 0u; s < P.splits; s++) {
      acc += part[p0 + s * stride + PART_HEAD + c];
      nread += part[p0 + s * stride + 2u];
    }
    out[i] = acc;
  } else {
    var M = NEG_BIG;
    for (var s = 0u; s < P.splits; s++) { M = max(M, part[p0 + s * stride]); }
    var L = 0.0;
    for (var s = 0u; s < P.splits; s++) {
      let o = p0 + s * stride;
      let f = exp(part[o] - M);
      L = fma(f, part[o + 1u], L);
      acc = fma(f, part[o + PART_HEAD + c], acc);
      nread += part[o + 2u];
    }
    out[i] = select(0.0, acc / L, L > 0.0);
  }
  if (c == 0u && head % P.hpg == 0u) { reads[P.rslot + (b * P.G + head / P.hpg) * 4u + P.branch] = u32(nread); }
}
