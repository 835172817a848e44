// DSA indexer loss (docs/dsa-spec.md section 5), one invocation per query row (b, t), over the
// row's slots m < W (dsa_slots.wgsl):
//   target  p[m] = Σ_i exp(q[b,t,i]·k[b,s,g(i)]·scale − lse[b,i,t])  (heads ascending), / Σ_m p[m]
//   indexer r[m] = softmax over the slots of scores[b, t, s]
//   klRows[b, t]      = Σ_{p[m] > 0} p[m]·(log p[m] − log r[m])
//   dScores[b, t, m]  = gradScale·(r[m] − p[m]); 0 on slots without a token
// Three passes in slot order; the first keeps each slot's head sum in dScores (this row's own).
// q [B,T,H,dk], k [B,T,G,dk], lse [B,H,T] of the main attention over the same slots.

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn indexLoss(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * WG; // b·T + t
  if (row >= P.rows) { return; }
  let b = row / P.T;
  let t = row % P.T;
  let h = P.H / P.G;
  let out = row * P.W;
  var zp = 0.0;
  var mI = bitcast<f32>(0xff7fffffu); // the lowest finite f32; every row has a slot
  for (var m = 0u; m < P.W; m++) {
    let s = slotToken(b, t, m);
    if (s < 0) {
      dScores[out + m] = 0.0;
      continue;
    }
    let kRow = (b * P.T + u32(s)) * P.G;
    var p = 0.0;
    for (var i = 0u; i < P.H; i++) {
      let qOff = (row * P.H + i) * P.dk;
      let kOff = (kRow + i / h) * P.dk;
      var d = 0.0;
      for (var e = 0u; e < P.dk; e++) { d = fma(q[qOff + e], k[kOff + e], d); }
      p += exp(d * P.scale - lse[(b * P.H + i) * P.T + t]);
    }
    dScores[out + m] = p;
    zp += p;
    mI = max(mI, scores[row * P.T + u32(s)]);
  }
  var zr = 0.0;
  for (var m = 0u; m < P.W; m++) {
    let s = slotToken(b, t, m);
    if (s >= 0) { zr += exp(scores[row * P.T + u32(s)] - mI); }
  }
  let lseI = mI + log(zr);
  var kl = 0.0;
  for (var m = 0u; m < P.W; m++) {
    let s = slotToken(b, t, m);
    if (s < 0) { continue; }
    let p = dScores[out + m] / zp;
    let logR = scores[row * P.T + u32(s)] - lseI;
    if (p > 0.0) { kl += p * (log(p) - logR); }
    dScores[out + m] = P.gradScale * (exp(logR) - p);
  }
  klRows[row] = kl;
}
