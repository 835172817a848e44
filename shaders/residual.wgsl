// Residual stream: out = a + b (forward) and y += x (gradient accumulation in the backward).
// Elementwise over n floats; 1-D grid folded into 2-D for large n.
// Every storage binding is read_write: WebGPU forbids one buffer bound read-only and writable in
// the same dispatch, and our arenas put inputs and outputs in the same buffer.

struct Params { n: u32 }

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

override WG: u32 = 256;

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.n) { return; }
  out[i] = a[i] + b[i];
}
