// Attention backward, the part every dQ and dK/dV kernel shares (dense and NSA, both variants),
// after attention_common.wgsl: lse [B,H,T] (natural log, from the forward), dout [B,T,H,DV] and
// delta [B,H,T] = rowsum(dO ∘ O) at bindings 4–6; the gradients follow from 7.

fn loadDout4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = dout[base + d + c]; } }
  return r;
}
