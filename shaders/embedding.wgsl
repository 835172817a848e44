// Token embedding. forward: out[n, :] = table[tokens[n], :]. backward: dtable[v, :] += Σ dout[n, :]
// over the positions n holding token v, read from a CPU-built reverse index
// (src/kernels/embedding-index.ts): one workgroup per (distinct token, channel tile) sums its
// positions in ascending order, so there are no atomics and the result is bit-reproducible.
// Bindings are shared by both entry points (one declaration per slot, portable across compilers):
//   forward:  ids = tokens [N], src = table [V, C], dst = out [N, C]
//   backward: ids = index [3N + 2], src = dout [N, C], dst = dtable [V, C]

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.N * P.C) { return; }
  let n = i / P.C;
  let c = i - n * P.C;
  let t = ids[n];
  if (t < 0 || u32(t) >= P.V) {
    dst[i] = bitcast<f32>(P.nanBits);
  } else {
    dst[i] = src[u32(t) * P.C + c];
  }
}

@compute @workgroup_size(WG)
fn backward(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let g = wid.x + wid.y * nwg.x;
  let u = g / P.tiles;
  let c = (g - u * P.tiles) * WG + lid;
  if (u >= u32(ids[0]) || c >= P.C) { return; }
  let t = ids[1u + u];
  if (t < 0 || u32(t) >= P.V) { return; }
  let s0 = u32(ids[1u + P.N + u]);
  let s1 = u32(ids[2u + P.N + u]);
  let order = 2u + 2u * P.N;
  var acc = 0.0;
  for (var k = s0; k < s1; k++) {
    acc += src[u32(ids[order + k]) * P.C + c];
  }
  let o = u32(t) * P.C + c;
  dst[o] = dst[o] + acc;
}
