// Residual stream: out = a + b (forward) and y += x (gradient accumulation in the backward).
// Elementwise over n floats; 1-D grid folded into 2-D for large n.
// Every storage binding is read_write: WebGPU forbids one buffer bound read-only and writable in
// the same dispatch, and our arenas put inputs and outputs in the same buffer.

override WG: u32 = 256;

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.n) { return; }
  out[i] = a[i] + b[i];
}
