// NSA branch attention, dK/dV of the simple variant (after attention_common.wgsl,
// attention_bwd_common.wgsl, nsa_attention_common.wgsl and nsa_attention_simple.wgsl; delta and
// lse come from the earlier passes). One invocation per key row s of (b, g), x = (b·G + g)·S + s —
// consecutive invocations hold consecutive keys of one group, which share most of their readers —
// loops over exactly the queries that read it, ascending t and then the heads of group g:
//   win: t ∈ [s, s + w − 1];  cmp: t ≥ s·d + l − 1;  sel: the reverse index of (b, g, s / lSel), t ≥ s,
// recomputing  P = exp(q·k/√DK − lse),  dV += P dO,  dS = P (dO·v − delta),  dK += dS q / √DK.
// No workgroup memory, no barriers; one writer per element and a fixed order: same bits each run.
// Bindings as nsa_attention_dkdv.wgsl: 4 lse, 5 dout, 6 delta, then per entry point —
//   keyGrads (cmp, win): 7 gradK, 8 gradV
//   keyGradsSel:         7 gradOut (gradK when P.want = 1, gradV when P.want = 2), 8 rev: the
//                        offsets [B·G·nB + 1], then the ascending query lists from P.revBase.

var<private> kr: array<f32, MAXD>;
var<private> vr: array<f32, MAXD>;
var<private> dk: array<f32, MAXD>;
var<private> dv: array<f32, MAXD>;

struct Key {
  b: u32,
  s: u32,
  g: u32,
  valid: bool,
}

// The invocation's key row (1-D grid folded into 2-D); rows past B·S·G are not valid.
fn keyRow(gid: vec3<u32>, nwg: vec3<u32>) -> Key {
  let x = gid.x + gid.y * nwg.x * WG;
  let bg = x / P.S;
  return Key(bg / P.G, x % P.S, bg % P.G, x < P.keys);
}

fn kvRow(c: Key) -> u32 { return (c.b * P.S + c.s) * P.G + c.g; }

fn loadKey(c: Key) {
  let x = kvRow(c);
  for (var d = 0u; d < DK; d++) { kr[d] = k[x * DK + d]; dk[d] = 0.0; }
  for (var d = 0u; d < DV; d++) { vr[d] = v[x * DV + d]; dv[d] = 0.0; }
}

// Adds the terms of query t, heads of group g in order (bit 0 of want: dK, bit 1: dV).
fn readBy(c: Key, t: u32, want: u32) {
  for (var i = 0u; i < P.hpg; i++) {
    let head = c.g * P.hpg + i;
    let x = (c.b * P.T + t) * P.H + head;
    let lrow = (c.b * P.H + head) * P.T + t;
    var a = 0.0;
    for (var d = 0u; d < DK; d++) { a = fma(q[x * DK + d], kr[d], a); }
    let p = exp(a * P.scale - lse[lrow]);
    if ((want & 2u) != 0u) {
      for (var d = 0u; d < DV; d++) { dv[d] = fma(p, dout[x * DV + d], dv[d]); }
    }
    if ((want & 1u) != 0u) {
      var e = 0.0;
      for (var d = 0u; d < DV; d++) { e = fma(vr[d], dout[x * DV + d], e); }
      let ds = p * (e - delta[lrow]);
      for (var d = 0u; d < DK; d++) { dk[d] = fma(ds, q[x * DK + d], dk[d]); }
    }
  }
}

@compute @workgroup_size(WG)
fn keyGrads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let c = keyRow(gid, nwg);
  if (!c.valid) { return; }
  loadKey(c);
  var t0 = c.s;
  var t1 = min(P.T, c.s + P.w);
  if (P.branch == CMP) {
    t0 = c.s * P.d + P.l - 1u;
    t1 = P.T;
  }
  for (var t = t0; t < t1; t++) { readBy(c, t, 3u); }
  let x = kvRow(c);
  for (var d = 0u; d < DK; d++) { gradK[x * DK + d] = dk[d] * P.scale; }
  for (var d = 0u; d < DV; d++) { gradV[x * DV + d] = dv[d]; }
}

@compute @workgroup_size(WG)
fn keyGradsSel(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let c = keyRow(gid, nwg);
  if (!c.valid) { return; }
  loadKey(c);
  // The block's list from its first query t ≥ s (binary search; the list is ascending).
  let r = (c.b * P.G + c.g) * P.nB + c.s / P.lSel;
  var lo = u32(rev[r]);
  var hi = u32(rev[r + 1u]);
  let stop = hi;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (u32(rev[P.revBase + mid]) < c.s) { lo = mid + 1u; } else { hi = mid; }
  }
  for (var n = lo; n < stop; n++) { readBy(c, u32(rev[P.revBase + n]), P.want); }
  let x = kvRow(c);
  if (P.want == 1u) {
    for (var d = 0u; d < DK; d++) { gradOut[x * DK + d] = dk[d] * P.scale; }
  } else {
    for (var d = 0u; d < DV; d++) { gradOut[x * DV + d] = dv[d]; }
  }
}
