// NSA compressed and sliding-window attention, forward, query-tiled (after attention_common.wgsl,
// nsa_attention_common.wgsl, attention_dense_rows.wgsl and nsa_attention_tiled.wgsl). These two branches read one contiguous
// key range per query, [keyLo(t), keyHi(t)), so they run dense attention's tiling: a workgroup owns
// WG rows of one (b, g), row r = t·hpg + j, and a staged key serves every row of the workgroup
// (consecutive queries share most of their keys) instead of the hpg rows of one query in the group
// kernel (nsa_attention_fwd.wgsl, which the selected branch keeps: its keys differ per query).
// Per row, keys ascending: online softmax in natural-log units (nsa_attention_common.wgsl says why),
// the running state rescaled once per CH keys; keys outside the row's range score NEG and add an
// exact 0. A row's arithmetic depends only on t (its workgroup, tiles and chunks start at keyLo of
// the workgroup's first query), never on T: causality holds bit for bit.
// A query with no keys (cmp, ncmp(t) = 0) writes out = 0 and lse = −inf, as the group kernel.
// Bindings: 4 out, 5 lse; forwardCount adds 6 keysRead [B,T,G] (u32): the keys whose score the
// group's first head computed in range, counted here (docs/nsa-spec.md property 7).

const CH: u32 = 8u;   // keys per online-softmax rescale (BK is a multiple)

// The row's forward; returns the keys it scored in range.
fn attendRows(wid: vec3<u32>, lid: u32) -> u32 {
  let r = queryRow(wid, lid);
  let t = r.t;
  let row = rowKeys(t);
  let lo = row.lo;
  let hi = row.hi;
  let staged = stagedKeys(wid.x);

  var qr: array<vec4<f32>, MAX4>;
  var o: array<vec4<f32>, MAX4>;
  for (var i = 0u; i < DK4; i++) { qr[i] = loadQ4(r.x * DK, i * 4u); }
  var m = NEG;   // running max of the scores
  var l = 0.0;   // running Σ exp(score − m)
  var seen = 0u;

  for (var s0 = staged.lo; s0 < staged.hi; s0 += BK) {
    stageKeys(r.b, r.g, s0, lid);
    let nKeys = min(BK, staged.hi - s0);
    for (var c0 = 0u; c0 < nKeys; c0 += CH) {
      if (s0 + c0 >= hi) { break; }           // keys ascend: the rest are past this row's range
      if (s0 + c0 + CH <= lo) { continue; }   // the whole chunk is before it
      var sc: array<f32, CH>;
      var mx = m;
      for (var c = 0u; c < CH; c++) {
        let key = s0 + c0 + c;
        var a = vec4<f32>(0.0);
        for (var i = 0u; i < DK4; i++) { a = fma(qr[i], ks[(c0 + c) * DK4 + i], a); }
        sc[c] = select(NEG, (a.x + a.y + a.z + a.w) * P.scale, key >= lo && key < hi);
        mx = max(mx, sc[c]);
      }
      let alpha = exp(m - mx);
      l *= alpha;
      for (var i = 0u; i < DV4; i++) { o[i] *= alpha; }
      for (var c = 0u; c < CH; c++) {
        let key = s0 + c0 + c;
        let inRange = key >= lo && key < hi;
        let p = select(0.0, exp(sc[c] - mx), inRange);
        l += p;
        seen += select(0u, 1u, inRange);
        for (var i = 0u; i < DV4; i++) { o[i] = fma(vec4<f32>(p), vs[(c0 + c) * DV4 + i], o[i]); }
      }
      m = mx;
    }
  }

  if (!r.live) { return seen; }
  let any = hi > lo;
  let inv = select(0.0, 1.0 / l, any);
  for (var i = 0u; i < DV4; i++) {
    for (var c = 0u; c < 4u; c++) {
      let d = i * 4u + c;
      if (d < DV) { out[r.x * DV + d] = o[i][c] * inv; }
    }
  }
  lse[r.lrow] = select(bitcast<f32>(P.negInf), lseNat(m, l), any);
  return seen;
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  attendRows(wid, lid);
}

@compute @workgroup_size(WG)
fn forwardCount(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let seen = attendRows(wid, lid);
  let r = queryRow(wid, lid);
  if (r.live && r.head == r.g * P.hpg) { keysRead[(r.b * P.T + r.t) * P.G + r.g] = seen; }
}
