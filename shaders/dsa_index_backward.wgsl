// DSA indexer backward (docs/dsa-spec.md section 5), gathered, no atomics, from dScores
// [B, T, W] by slot (dsa_slots.wgsl), a = qI[b,t,j]·kI[b,s], the ReLU's derivative 1[a > 0]:
//   queryGrads, one invocation per (b, t, j), over the row's slots in order:
//     dwI[b,t,j] = scale · Σ_m dScores[b,t,m] · ReLU(a)
//     dqI[b,t,j] = scale · Σ_m dScores[b,t,m] · wI[b,t,j] · 1[a > 0] · kI[b,s]
//   keyGrads, one invocation per (b, s), over the queries t reading s in ascending order (warm-up:
//   t = s … T − 1, slot s; sparse: the reverse index of sel, group 0, lSel = 1, each query's slot
//   of s by binary search in its ascending row), heads j ascending:
//     dkI[b,s] = scale · Σ_t Σ_j dScores[b,t,m(t)] · wI[b,t,j] · 1[a > 0] · qI[b,t,j]
// reverse is nsa_reverse_index.wgsl's `queries`: offsets in its first R + 1 entries (R = B·G·T),
// then the lists. Overwrites dqI, dwI, dkI.

override WG: u32 = 64;
const MAX_DI: u32 = 128u;

fn indexDot(qOff: u32, kOff: u32) -> f32 {
  var a = 0.0;
  for (var e = 0u; e < P.indexDim; e++) { a = fma(qI[qOff + e], kI[kOff + e], a); }
  return a;
}

@compute @workgroup_size(WG)
fn queryGrads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG; // (b·T + t)·H_I + j
  if (i >= P.rows * P.indexHeads) { return; }
  let row = i / P.indexHeads;
  let b = row / P.T;
  let t = row % P.T;
  let qOff = i * P.indexDim;
  let w = wI[i];
  var acc: array<f32, MAX_DI>;
  var dw = 0.0;
  for (var m = 0u; m < P.W; m++) {
    let s = slotToken(b, t, m);
    if (s < 0) { continue; }
    let kOff = (b * P.T + u32(s)) * P.indexDim;
    let a = indexDot(qOff, kOff);
    if (a <= 0.0) { continue; }
    let g = dScores[row * P.W + m];
    dw = fma(g, a, dw);
    let gw = g * w;
    for (var e = 0u; e < P.indexDim; e++) { acc[e] = fma(gw, kI[kOff + e], acc[e]); }
  }
  dwI[i] = P.scale * dw;
  for (var e = 0u; e < P.indexDim; e++) { dqI[qOff + e] = P.scale * acc[e]; }
}

// Slot of token s in the ascending sparse row of (b, t) (−1 padding sorts last); s is in the row.
fn slotOf(b: u32, t: u32, s: u32) -> u32 {
  return selLowerBound((b * P.T + t) * P.G * P.topK, P.topK, s);
}

// acc += Σ_j dScores[b,t,m] · wI[b,t,j] · 1[a > 0] · qI[b,t,j] (heads ascending).
fn addQuery(acc: ptr<function, array<f32, MAX_DI>>, b: u32, t: u32, m: u32, kOff: u32) {
  let row = b * P.T + t;
  let g = dScores[row * P.W + m];
  for (var j = 0u; j < P.indexHeads; j++) {
    let qOff = (row * P.indexHeads + j) * P.indexDim;
    if (indexDot(qOff, kOff) <= 0.0) { continue; }
    let gw = g * wI[row * P.indexHeads + j];
    for (var e = 0u; e < P.indexDim; e++) { (*acc)[e] = fma(gw, qI[qOff + e], (*acc)[e]); }
  }
}

@compute @workgroup_size(WG)
fn keyGrads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG; // b·T + s
  if (i >= P.rows) { return; }
  let b = i / P.T;
  let s = i % P.T;
  let kOff = i * P.indexDim;
  var acc: array<f32, MAX_DI>;
  if (P.dense == 1u) {
    for (var t = s; t < P.T; t++) { addQuery(&acc, b, t, s, kOff); }
  } else {
    let r = b * P.G * P.T + s; // (b, group 0, token s)
    let lo = u32(reverse[r]);
    let hi = u32(reverse[r + 1u]);
    for (var n = lo; n < hi; n++) {
      let t = u32(reverse[P.R + 1u + n]);
      addQuery(&acc, b, t, slotOf(b, t, s), kOff);
    }
  }
  for (var e = 0u; e < P.indexDim; e++) { dkI[kOff + e] = P.scale * acc[e]; }
}
