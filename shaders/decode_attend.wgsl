// GPU decode, attention of the new query (after decode_common.wgsl): one workgroup of WG lanes per
// (b, head) over the keys of branch P.branch — CMP: compressed rows 0 … ncmp(t) − 1; SEL: the
// positions ≤ t of the selected blocks sel[slot + (b·G + g)·nSel + ·], in their (ascending) order;
// WIN: positions max(0, t − w + 1) … t; FULL: positions 0 … t (dense). SEL, WIN, FULL: lanes take
// keys in turn (key o goes to lane o % WG): scores q·k/√dk into scratch, the max by a fixed tree, then
// exp(s − max) into scratch and their sum by the same tree. Then, every branch: each lane owns
// output columns and sums p·v over the keys in ascending order. Fixed orders throughout: same
// inputs, same bits.
// The group's first head counts the key rows it read into reads[rslot + (b·G + g)·4 + branch].
// CMP reuses the selection: decode_select.wgsl, dispatched just before, leaves each head's p_cmp —
// the softmax of q·kc/√dk over the ncmp(t) visible blocks, the compressed branch's own weights — in
// that head's scratch row, so the branch reads only the compressed values (its keys were read once,
// by the selection). Cache rows advance by one per key (no division per key; the window ring wraps).
// Bindings: q [B, H, dk], k / v caches [B, rows, G, dk|dv], out [B, H, dv], scratch [B, H, cap],
// sel (i32), reads (u32).

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

@compute @workgroup_size(WG)
fn attend(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let bh = wid.x + wid.y * nwg.x;
  if (bh >= P.B * P.H) { return; }
  let head = bh % P.H;
  let b = bh / P.H;
  let g = head / P.hpg;
  let bg = b * P.G + g;
  let t = st[0];
  let qo = bh * P.dk;
  let scr = bh * P.cap;
  let nr = rangeCount();

  var inv = 1.0;
  var nread = ncmp(t);
  if (P.branch != CMP) {
    // Scores and their max.
    var mx = NEG_BIG;
    var o = 0u;
    for (var m = 0u; m < nr; m++) {
      let r = keyRange(bg, m, t);
      for (var s = r.x + lane; s < r.y; s += WG) {
        let ko = keyRow(b, s, g) * P.dk;
        var a = 0.0;
        for (var c = 0u; c < P.dk; c++) { a = fma(q[qo + c], k[ko + c], a); }
        let sc = a * P.scale;
        scratch[scr + o + s - r.x] = sc;
        mx = max(mx, sc);
      }
      o += r.y - r.x;
    }
    let M = reduceMax(lane, mx);

    // exp(s − max), their sum and the count of keys read.
    var sum = 0.0;
    var cnt = 0u;
    o = 0u;
    for (var m = 0u; m < nr; m++) {
      let r = keyRange(bg, m, t);
      for (var s = r.x + lane; s < r.y; s += WG) {
        let e = exp(scratch[scr + o + s - r.x] - M);
        scratch[scr + o + s - r.x] = e;
        sum += e;
        cnt++;
      }
      o += r.y - r.x;
    }
    let S = reduceSum(lane, sum, cnt);
    inv = select(0.0, 1.0 / S.x, S.y > 0.0);
    nread = u32(S.y);
  }
  storageBarrier();

  // Output columns: Σ p·v in ascending key order.
  for (var c = lane; c < P.dv; c += WG) {
    var acc = 0.0;
    var o = 0u;
    for (var m = 0u; m < nr; m++) {
      let r = keyRange(bg, m, t);
      var row = r.x % P.rows;
      for (var s = r.x; s < r.y; s++) {
        acc = fma(scratch[scr + o], v[cacheRow(b, row, g) * P.dv + c], acc);
        o++;
        row++;
        if (row == P.rows) { row = 0u; }
      }
    }
    out[bh * P.dv + c] = acc * inv;
  }
  if (lane == 0u && head % P.hpg == 0u) { reads[P.rslot + bg * 4u + P.branch] = nread; }
}
