// NSA branch attention, forward of the simple variant (after attention_common.wgsl,
// nsa_attention_common.wgsl and nsa_attention_simple.wgsl): each invocation runs an online softmax over its row's keys in
// ascending order, scores in natural-log units, rescaling only when the running max grows. A query with no
// keys (cmp with ncmp(t) = 0) writes out = 0 exactly and lse = −inf.
// Bindings as nsa_attention_fwd.wgsl: 4 out, 5 lse, then per entry point —
//   forward (cmp, win): nothing more      forwardCount: 6 keysRead
//   forwardSel:          6 sel            forwardSelCount: 6 sel, 7 keysReadSel
// keysRead [B,T,G] (u32): the keys whose score the group's first head computed (docs/nsa-spec.md
// property 7, counted in the kernel).

var<private> qr: array<f32, MAXD>;
var<private> o: array<f32, MAXD>;
var<private> mx: f32;     // running max of the scores
var<private> sum: f32;    // running Σ exp(score − mx)
var<private> seen: u32;   // keys scored

fn begin(r: Row) {
  let base = ((r.b * P.T + r.t) * P.H + r.head) * DK;
  for (var d = 0u; d < DK; d++) { qr[d] = q[base + d]; }
  for (var d = 0u; d < DV; d++) { o[d] = 0.0; }
  mx = NEG;
  sum = 0.0;
  seen = 0u;
}

// Keys rows [keys.x, keys.y) of the row's group, in order.
fn visit(r: Row, keys: vec2<u32>) {
  for (var s = keys.x; s < keys.y; s++) {
    let kv = (r.b * P.S + s) * P.G + r.g;
    var a = 0.0;
    for (var d = 0u; d < DK; d++) { a = fma(qr[d], k[kv * DK + d], a); }
    let sc = a * P.scale;
    if (sc > mx) {
      let alpha = exp(mx - sc);
      sum *= alpha;
      for (var d = 0u; d < DV; d++) { o[d] *= alpha; }
      mx = sc;
    }
    let p = exp(sc - mx);
    sum += p;
    for (var d = 0u; d < DV; d++) { o[d] = fma(p, v[kv * DV + d], o[d]); }
    seen++;
  }
}

fn finish(r: Row) {
  let x = (r.b * P.T + r.t) * P.H + r.head;
  let inv = select(0.0, 1.0 / sum, seen > 0u);
  for (var d = 0u; d < DV; d++) { out[x * DV + d] = o[d] * inv; }
  lse[(r.b * P.H + r.head) * P.T + r.t] = select(bitcast<f32>(P.negInf), lseNat(mx, sum), seen > 0u);
}

fn visitSel(r: Row) {
  let base = ((r.b * P.T + r.t) * P.G + r.g) * P.nSel;
  for (var m = 0u; m < P.nSel; m++) { visit(r, blockRange(sel[base + m], r.t)); }
}

fn countSlot(r: Row) -> u32 { return (r.b * P.T + r.t) * P.G + r.g; }

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  visit(r, keyRange(r.t));
  finish(r);
}

@compute @workgroup_size(WG)
fn forwardSel(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  visitSel(r);
  finish(r);
}

@compute @workgroup_size(WG)
fn forwardCount(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  visit(r, keyRange(r.t));
  finish(r);
  if (r.head % P.hpg == 0u) { keysRead[countSlot(r)] = seen; }
}

@compute @workgroup_size(WG)
fn forwardSelCount(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = queryRow(gid, nwg);
  if (!r.valid) { return; }
  begin(r);
  visitSel(r);
  finish(r);
  if (r.head % P.hpg == 0u) { keysReadSel[countSlot(r)] = seen; }
}
