// GPU decode, the per-row pieces around attention (after decode_common.wgsl). One invocation per
// output element; sums run in ascending index order, so results do not depend on the grid.
//   matvec          c[b, n] (+)= Σ_k a[b, k] · W[k, n]   (W = b; flag 1: W stored [N, K]; flag 2: add to c)
//   ropeQ           b[b, i, ·] rotated in place to position t (a = the cos/sin table [cap, half, 2])
//   appendKV        the new token's k (rotated) and v into the caches: d[b, t % rows, g, ·] = rope(b),
//                   e[b, t % rows, g, ·] = c. With P.members = S > 0, S KV sets in one dispatch (NSA's
//                   cmp, sel and win): set s's five words at st[P.tab + 5s] give its cache rows and
//                   where its k, v, K cache and V cache start in b, c, d and e_ (floats)
//   convK           the key convolution at t (docs/nsa-spec.md 3.1): the fresh projection b[b, ·] joins
//                   the ring c[b, t % K, ·] of the last K raw keys, then b[b, ch] = Σ_j a[ch, j] ·
//                   c[b, (t − (K − 1) + j) % K, ch] over the taps at positions ≥ 0, in ascending j by
//                   fma: the training kernel's sum (short_conv.wgsl), bit for bit
//   compressAvg     when t completes block k: b[b, k, g, e] = mean of a[b, k·d + i, g, e], i < l
//   compressHidden  e[b, g, u] = gelu(d[u] + Σ_r (a[b, k·d + r / D, g, r % D] + b[r]) · c[r, u])
//   compressOut     d[b, k, g, e] = c[e] + Σ_u a[b, g, u] · b[u, e]
// Every storage binding is read_write (see residual.wgsl).

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

@compute @workgroup_size(WG)
fn matvec(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  if (i >= P.total) { return; }
  let n = i % P.N;
  let row = i / P.N;
  _ = st[0]; // bound in every entry point (one binding list per kernel); matvec does not need t
  let trans = (P.flags & 1u) != 0u;
  var s = 0.0;
  for (var k = 0u; k < P.K; k++) {
    let w = select(b[k * P.N + n], b[n * P.K + k], trans);
    s = fma(a[row * P.K + k], w, s);
  }
  if ((P.flags & 2u) != 0u) { c[i] += s; } else { c[i] = s; }
}

@compute @workgroup_size(WG)
fn ropeQ(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  if (i >= P.total) { return; } // B·H·half pairs
  let j = i % P.half;
  let lo = (i / P.half) * 2u * P.half + j;
  let cs = (st[0] * P.half + j) * 2u;
  let x0 = b[lo];
  let x1 = b[lo + P.half];
  b[lo] = x0 * a[cs] - x1 * a[cs + 1u];
  b[lo + P.half] = x0 * a[cs + 1u] + x1 * a[cs];
}

@compute @workgroup_size(WG)
fn convK(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  if (i >= P.total) { return; } // B·D channels
  let ch = i % P.D;
  let bb = i / P.D;
  let t = st[0];
  c[(bb * P.K + t % P.K) * P.D + ch] = b[i];
  var acc = 0.0;
  for (var j = 0u; j < P.K; j++) {
    let back = P.K - 1u - j;
    if (back <= t) { acc = fma(a[ch * P.K + j], c[(bb * P.K + (t - back) % P.K) * P.D + ch], acc); }
  }
  b[i] = acc;
}

@compute @workgroup_size(WG)
fn appendKV(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i0 = linear(gid, nwg);
  if (i0 >= P.total) { return; } // S·B·G·(dk + dv), S = max(1, P.members)
  let w = P.dk + P.dv;
  let per = P.B * P.G * w;
  var i = i0;
  var rows = P.rows;
  var kIn = 0u;
  var vIn = 0u;
  var kOut = 0u;
  var vOut = 0u;
  if (P.members > 0u) {
    let tb = P.tab + 5u * (i0 / per);
    i = i0 % per;
    rows = st[tb];
    kIn = st[tb + 1u];
    vIn = st[tb + 2u];
    kOut = st[tb + 3u];
    vOut = st[tb + 4u];
  }
  let e = i % w;
  let bg = i / w;
  let g = bg % P.G;
  let bb = bg / P.G;
  let t = st[0];
  let row = (bb * rows + t % rows) * P.G + g;
  if (e < P.dk) {
    let half = P.dk / 2u;
    let x = kIn + bg * P.dk;
    let j = e % half;
    let cs = (t * half + j) * 2u;
    if (e < half) {
      d[kOut + row * P.dk + e] = b[x + j] * a[cs] - b[x + j + half] * a[cs + 1u];
    } else {
      d[kOut + row * P.dk + e] = b[x + j] * a[cs + 1u] + b[x + j + half] * a[cs];
    }
  } else {
    let ev = e - P.dk;
    e_[vOut + row * P.dv + ev] = c[vIn + bg * P.dv + ev];
  }
}

@compute @workgroup_size(WG)
fn compressAvg(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  let t = st[0];
  if (i >= P.total || !emits(t)) { return; } // B·G·D
  let e = i % P.D;
  let g = (i / P.D) % P.G;
  let bb = i / (P.D * P.G);
  let k = (t + 1u - P.l) / P.d;
  var s = 0.0;
  for (var r = 0u; r < P.l; r++) { s += a[((bb * P.rows + k * P.d + r) * P.G + g) * P.D + e]; }
  b[((bb * P.Nmax + k) * P.G + g) * P.D + e] = s / f32(P.l);
}

@compute @workgroup_size(WG)
fn compressHidden(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  let t = st[0];
  if (i >= P.total || !emits(t)) { return; } // B·G·Dh
  let u = i % P.Dh;
  let g = (i / P.Dh) % P.G;
  let bb = i / (P.Dh * P.G);
  let k = (t + 1u - P.l) / P.d;
  var s = d[u];
  for (var r = 0u; r < P.l * P.D; r++) {
    let z = a[((bb * P.rows + k * P.d + r / P.D) * P.G + g) * P.D + r % P.D] + b[r];
    s = fma(z, c[r * P.Dh + u], s);
  }
  e_[i] = gelu(s);
}

@compute @workgroup_size(WG)
fn compressOut(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear(gid, nwg);
  let t = st[0];
  if (i >= P.total || !emits(t)) { return; } // B·G·D
  let e = i % P.D;
  let bg = i / P.D;
  let g = bg % P.G;
  let bb = bg / P.G;
  let k = (t + 1u - P.l) / P.d;
  var s = c[e];
  for (var u = 0u; u < P.Dh; u++) { s = fma(a[bg * P.Dh + u], b[u * P.D + e], s); }
  d[((bb * P.Nmax + k) * P.G + g) * P.D + e] = s;
}
