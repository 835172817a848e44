// NSA branch attention, backward part 3: dK and dV per key, key-outer, on the shared machinery of
// attention_keys.wgsl (after attention_common.wgsl, attention_bwd_common.wgsl,
// nsa_attention_common.wgsl and attention_keys.wgsl; delta and lse come from the earlier passes):
// the part the entry points share. A workgroup owns KB consecutive keys of one (batch b, group g)
// — wid = (chunk, g, b); a sel chunk never crosses a selection block — and loops over the queries
// that read them, in ascending t:
//   win: t ∈ [s, s + w − 1];  cmp: t ≥ k·d + l − 1;  sel: the reverse index of (b, g, block).
// The entry points: nsa_attention_dkdv_range.wgsl (cmp, win), nsa_attention_dkdv_sel.wgsl (sel,
// one gradient a pass: 8 storage bindings) and nsa_attention_dkdv_sel_both.wgsl (sel, dK and dV in
// one pass: 9, where the adapter allows them). Bindings 1 q, 2 k, 3 v, 4 lse, 5 dout, 6 delta; rev
// holds the reverse index's offsets [B·G·nB + 1], then the ascending query lists from P.revBase.

var<workgroup> listStart: u32;
var<workgroup> listLen: u32;

// First key row of chunk x (position; compressed block for cmp). Sel chunks tile each block.
fn chunkFirst(x: u32) -> u32 {
  if (P.branch == SEL) { return (x / P.cpb) * P.lSel + (x % P.cpb) * KB; }
  return x * KB;
}

fn chunkEnd(x: u32, first: u32) -> u32 {
  var e = min(first + KB, P.S);
  if (P.branch == SEL) { e = min(e, (x / P.cpb + 1u) * P.lSel); }
  return e;
}

// Does query t read key row `key`? (For sel, t is on the block's list: it selected the block.)
fn reads(key: u32, t: u32) -> bool {
  if (P.branch == CMP) { return t + 1u >= key * P.d + P.l; }
  if (P.branch == WIN) { return t >= key && t - key < P.w; }
  return t >= key;
}

// The key chunk x of (b, g) over heads h0 … h0 + hn − 1 of the group (all, or one with a head
// split); split: the thread writes its head's part for query piece qp of nq at row
// (kt.row · hpg + h0) · nq + qp (parts [B,S,G,hpg,nq,·], which attention_sum_heads.wgsl adds up),
// else the gradient at kt.row.
fn chunkKeys(b: u32, g: u32, x: u32, h0: u32, hn: u32, split: bool, qp: u32, nq: u32, lid: u32) -> KeyThread {
  let first = chunkFirst(x);
  var kt = beginKeys(b, g, P.S, first, chunkEnd(x, first), lid);
  kt.h0 = h0;
  kt.hn = hn;
  if (split) { kt.out = (kt.row * P.hpg + h0) * nq + qp; }
  return kt;
}

// Query piece qp of nq (equal pieces of the chunk's readers, the last shorter or empty).
fn keyGradsOf(b: u32, g: u32, x: u32, h0: u32, hn: u32, split: bool, qp: u32, nq: u32, lid: u32) {
  let kt = chunkKeys(b, g, x, h0, hn, split, qp, nq, lid);
  let first = chunkFirst(x);
  let end = chunkEnd(x, first);
  // The chunk's readers are t ∈ [tFirst, tEnd), ascending.
  var tFirst = first;
  var tEnd = min(P.T, end - 1u + P.w);
  if (P.branch == CMP) {
    tFirst = first * P.d + P.l - 1u;
    tEnd = P.T;
  }
  let len = (tEnd - tFirst + nq - 1u) / nq;
  let t0 = min(tEnd, tFirst + qp * len);
  readRange(b, g, kt, t0, min(tEnd, t0 + len), hn, lid);
  storeKeyGrads(kt);
}

// Adds the terms of every query on the reverse-index list of chunk x's selection block (those at
// or past the chunk's first key; ascending t, the workgroup's hn heads innermost) into the thread's
// dK (want bit 0) and dV (bit 1). Uniform b, g, x, hn, want.
fn selChunkRows(b: u32, g: u32, x: u32, kt: KeyThread, hn: u32, want: u32, lid: u32) {
  let h = hn;
  let first = chunkFirst(x);
  // The block's list, from its first query ≥ the chunk's first key (binary search).
  if (lid == 0u) {
    let r = (b * P.G + g) * P.nB + x / P.cpb;
    var lo = u32(rev[r]);
    var hi = u32(rev[r + 1u]);
    let stop = hi;
    while (lo < hi) {
      let mid = (lo + hi) / 2u;
      if (u32(rev[P.revBase + mid]) < first) { lo = mid + 1u; } else { hi = mid; }
    }
    listStart = lo;
    listLen = stop - lo;
  }
  let start = workgroupUniformLoad(&listStart);
  let rows = workgroupUniformLoad(&listLen) * h;
  for (var r0 = 0u; r0 < rows; r0 += BQ) {
    workgroupBarrier();   // the previous tile is consumed
    for (var y = lid; y < BQ; y += WG) {
      var t = NONE;
      if (r0 + y < rows) { t = u32(rev[P.revBase + start + (r0 + y) / h]); }
      rowT[y] = t;
    }
    addRows(b, g, kt, r0, rows, lid, want);
  }
}
