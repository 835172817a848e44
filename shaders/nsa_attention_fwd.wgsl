// NSA selected attention, forward (after attention_common.wgsl, nsa_attention_common.wgsl and
// nsa_attention_rows.wgsl; the compressed and window branches run nsa_attention_tiled_fwd.wgsl).
// Per row: online softmax over the lane's keys (scores in natural-log units, rescaled when the max
// grows), then the lanes merge: M = max m, L = Σ l·exp(m−M), O = Σ o·exp(m−M) / L, in lane order;
// lse = M + log(L). A query with no keys writes out = 0 exactly and lse = −inf.
// Bindings: 4 out, 5 lse, 6 sel; forwardSelCount adds 7 keysReadSel [B,T,G] (u32), the number of
// keys whose score the group's first head computed: the decode-reads property of docs/nsa-spec.md
// counted in the kernel itself.

// Running max and sum of row ri over its lanes, from the lane statistics at kv[0..WG).
fn rowTotals(ri: u32) -> vec2<f32> {
  var M = NEG;
  for (var y = 0u; y < NL; y++) { M = max(M, kv[ri * NL + y].x); }
  var L = 0.0;
  for (var y = 0u; y < NL; y++) { L += kv[ri * NL + y].y * exp(kv[ri * NL + y].x - M); }
  return vec2<f32>(M, L);
}

fn attend(b: u32, t: u32, g: u32, lid: u32, nk: u32) {
  let h = P.hpg;
  let me = laneOf(g, lid);

  var qr: array<vec4<f32>, MAX4>;
  var o: array<vec4<f32>, MAX4>;
  let qBase = ((b * P.T + t) * P.H + me.head) * DK;
  for (var c = 0u; c < DK4; c++) { qr[c] = loadQ4(qBase, c * 4u); }
  var m = NEG;   // running max of the scores
  var l = 0.0;   // running Σ exp(score − m)
  var seen = 0u;

  for (var n0 = 0u; n0 < nk; n0 += BK) {
    loadTile(b, t, g, nk, n0, lid);
    if (me.live) {
      // Keys kk ≡ lane (mod NL) of the tile, one at a time; rescale only when the max grows.
      let nValid = min(BK, nk - n0);
      for (var kk = me.lane; kk < nValid; kk += NL) {
        var a = vec4<f32>(0.0);
        for (var c = 0u; c < DK4; c++) { a = fma(qr[c], kv[kk * KS + c], a); }
        let s = (a.x + a.y + a.z + a.w) * P.scale;
        if (s > m) {
          let alpha = exp(m - s);
          l *= alpha;
          for (var c = 0u; c < DV4; c++) { o[c] *= alpha; }
          m = s;
        }
        let p = exp(s - m);
        l += p;
        for (var c = 0u; c < DV4; c++) { o[c] = fma(vec4<f32>(p), kv[BK * KS + kk * VS + c], o[c]); }
        seen++;
      }
    }
  }

  // Merge the lanes of each row in lane order, through the tile memory: lane statistics
  // (m, l, keys) at kv[0..WG), then CW output columns per round at kv[WG..).
  workgroupBarrier();
  kv[lid] = vec4<f32>(m, l, f32(seen), 0.0);
  workgroupBarrier();
  let own = rowTotals(me.ir);
  let f = exp(m - own.x);
  if (me.live && me.lane == 0u) {
    lse[(b * P.H + me.head) * P.T + t] = select(bitcast<f32>(P.negInf), lseNat(own.x, own.y), nk > 0u);
  }
  for (var c0 = 0u; c0 < DV4; c0 += CW) {
    workgroupBarrier();
    if (me.live) {
      for (var c = 0u; c < CW; c++) { if (c0 + c < DV4) { kv[WG + lid * CW + c] = o[c0 + c] * f; } }
    }
    workgroupBarrier();
    for (var x = lid; x < h * CW; x += WG) {
      let ri = x / CW;
      let c = c0 + x % CW;
      if (c < DV4) {
        var acc = vec4<f32>(0.0);
        for (var y = 0u; y < NL; y++) { acc += kv[WG + (ri * NL + y) * CW + x % CW]; }
        acc *= select(0.0, 1.0 / rowTotals(ri).y, nk > 0u);
        let oBase = ((b * P.T + t) * P.H + g * h + ri) * DV;
        for (var e = 0u; e < 4u; e++) { if (c * 4u + e < DV) { out[oBase + c * 4u + e] = acc[e]; } }
      }
    }
  }
}

// Keys scored by the group's first head (valid after attend).
fn keysScored() -> u32 {
  var n = 0.0;
  for (var y = 0u; y < NL; y++) { n += kv[y].z; }
  return u32(n);
}

@compute @workgroup_size(WG)
fn forwardSel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  stageSel(wid.z, wid.x, wid.y, lid);
  attend(wid.z, wid.x, wid.y, lid, uniformKeyCount(wid.x, lid));
}

@compute @workgroup_size(WG)
fn forwardSelCount(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  stageSel(wid.z, wid.x, wid.y, lid);
  attend(wid.z, wid.x, wid.y, lid, uniformKeyCount(wid.x, lid));
  if (lid == 0u) { keysReadSel[(wid.z * P.T + wid.x) * P.G + wid.y] = keysScored(); }
}
