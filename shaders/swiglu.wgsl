// SwiGLU gate, elementwise over n floats: out = silu(a) · b, silu(a) = a · σ(a).
// backward: da = dout · b · σ(a)(1 + a(1 − σ(a))), db = dout · silu(a) (both overwrite).
// 1-D grid folded into 2-D for large n. Bindings are shared by both entry points:
//   forward: a, b, y = out        backward: a, b, y = dout, da, db

override WG: u32 = 256;

// exp of −|v| only: never overflows, and σ of a very negative v keeps its relative accuracy.
fn sigmoid(v: f32) -> f32 {
  let e = exp(-abs(v));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, v >= 0.0);
}

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.n) { return; }
  let v = a[i];
  y[i] = v * sigmoid(v) * b[i];
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.n) { return; }
  let v = a[i];
  let s = sigmoid(v);
  let g = y[i];
  da[i] = g * b[i] * s * (1.0 + v * (1.0 - s));
  db[i] = g * v * s;
}
