// NSA branch attention, dQ of the simple variant (after attention_common.wgsl,
// attention_bwd_common.wgsl, nsa_attention_common.wgsl and nsa_attention_simple.wgsl;
// nsa_attention_delta.wgsl wrote delta = rowsum(dO ∘ O)). Each invocation recomputes, over its
// row's keys in ascending order,
//   P = exp(q·k/√DK − lse),  dS = P (dO·v − delta),  dQ += dS k / √DK,
// and overwrites gradQ, or adds to it when P.accumulate = 1 (the branches share one dQ).
// Bindings as nsa_attention_dq.wgsl: 4 lse, 5 dout, 6 delta, 7 gradQ; backwardDqSel adds 8 sel.

var<private> qr: array<f32, MAXD>;
var<private> dor: array<f32, MAXD>;
var<private> dq: array<f32, MAXD>;
var<private> lr: f32;     // the row's lse; −inf only for a query without keys, which visits none
var<private> dl: f32;     // delta of the row

fn begin(r: Row) {
  let x = (r.b * P.T + r.t) * P.H + r.head;
  for (var d = 0u; d < DK; d++) { qr[d] = q[x * DK + d]; dq[d] = 0.0; }
  for (var d = 0u; d < DV; d++) { dor[d] = dout[x * DV + d]; }
  let lrow = (r.b * P.H + r.head) * P.T + r.t;
  lr = lse[lrow];
  dl = delta[lrow];
}

fn visit(r: Row, keys: vec2<u32>) {
  for (var s = keys.x; s < keys.y; s++) {
    let kv = (r.b * P.S + s) * P.G + r.g;
    var a = 0.0;
    for (var d = 0u; d < DK; d++) { a = fma(qr[d], k[kv * DK + d], a); }
    var e = 0.0;
    for (var d = 0u; d < DV; d++) { e = fma(dor[d], v[kv * DV + d], e); }
    let ds = exp(a * P.scale - lr) * (e - dl);
    for (var d = 0u; d < DK; d++) { dq[d] = fma(ds, k[kv * DK + d], dq[d]); }
  }
}

fn finish(r: Row) {
  let base = ((r.b * P.T + r.t) * P.H + r.head) * DK;
  for (var d = 0u; d < DK; d++) {
    var prev = 0.0;
    if (P.accumulate != 0u) { prev = gradQ[base + d]; }
    gradQ[base + d] = prev + dq[d] * P.scale;
  }
}

@compute @workgroup_size(WG)
fn backwardDq(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  visit(r, keyRange(r.t));
  finish(r);
}

@compute @workgroup_size(WG)
fn backwardDqSel(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  let base = ((r.b * P.T + r.t) * P.G + r.g) * P.nSel;
  for (var m = 0u; m < P.nSel; m++) { visit(r, blockRange(sel[base + m], r.t)); }
  finish(r);
}
