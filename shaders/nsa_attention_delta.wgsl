// NSA branch attention, backward part 1: delta[b,head,t] = Σ_c dO[b,t,head,c] · O[b,t,head,c]
// (the softmax backward's row term), one thread per (b, head, t), summed in column order.
// out, dout [B,T,H,DV]; delta [B,H,T]. 1-D grid folded into 2-D for large B·H·T.

override DV: u32;
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn rowDelta(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = gid.x + gid.y * nwg.x * WG;
  if (x >= P.n) { return; }
  let t = x % P.T;
  let bh = x / P.T;
  let base = ((bh / P.H * P.T + t) * P.H + bh % P.H) * DV;
  var s = 0.0;
  for (var c = 0u; c < DV; c++) { s = fma(dout[base + c], out[base + c], s); }
  delta[x] = s;
}
