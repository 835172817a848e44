// Rotary position embedding on x [rows, heads, headDim]; row r sits at position r % T. Pair
// (j, j + half), j < half = headDim/2, rotates by angle pos · theta^(−2j/headDim); with `inverse`
// by −angle (the transpose, hence the backward). cos/sin come from a [T, half] table computed in
// float64 on the CPU: f32 sin/cos of angles up to T radians would be off by ~T·2⁻²⁴ (and WGSL only
// promises 2⁻¹¹ absolute accuracy for sin/cos).
// One invocation per (row, head, j): it reads both elements of its pair before writing them,
// so `applyInPlace` (out = x, a single binding: WebGPU forbids aliased writable bindings) is safe.

override WG: u32 = 256;

struct Pair {
  // Index of the first element; the second is lo + half.
  lo: u32,
  cos: f32,
  sin: f32,
}

fn pairAt(i: u32) -> Pair {
  let j = i % P.half;
  let rh = i / P.half; // row · heads + head
  let pos = (rh / P.heads) % P.T;
  let cs = table[pos * P.half + j];
  return Pair(rh * 2u * P.half + j, cs.x, select(cs.y, -cs.y, P.inverse != 0u));
}

@compute @workgroup_size(WG)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.pairs) { return; }
  let p = pairAt(i);
  let x0 = x[p.lo];
  let x1 = x[p.lo + P.half];
  out[p.lo] = x0 * p.cos - x1 * p.sin;
  out[p.lo + P.half] = x0 * p.sin + x1 * p.cos;
}

@compute @workgroup_size(WG)
fn applyInPlace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.pairs) { return; }
  let p = pairAt(i);
  let x0 = x[p.lo];
  let x1 = x[p.lo + P.half];
  x[p.lo] = x0 * p.cos - x1 * p.sin;
  x[p.lo + P.half] = x0 * p.sin + x1 * p.cos;
}
