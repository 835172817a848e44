// Attention, the part every dense (attention_*.wgsl) and NSA branch (nsa_attention_*.wgsl, both
// variants) kernel shares; the wrappers (src/kernels/attention.ts, nsa-attention.ts) prepend it,
// as WGSL has no #include. q [B,T,H,DK], k [B,S,G,DK], v [B,S,G,DV] at bindings 1–3; binding 0
// is the kernel family's uniform P; 4 and up are each pass's own.

override DK: u32;
override DV: u32;
override DK4: u32;   // ceil(DK / 4)
override DV4: u32;   // ceil(DV / 4)

const MAX4: u32 = 32u;   // DK, DV ≤ 128 (vec4 registers per row)
const LOG2E: f32 = 1.4426950408889634;
const LN2: f32 = 0.6931471805599453;
// Finite "minus infinity" for running maxima: WGSL does not promise IEEE infinities in arithmetic.
const NEG: f32 = -1e30;

// vec4 d/4 of the row at base, zero-padded past DK (q, k) or DV (v).
fn loadQ4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = q[base + d + c]; } }
  return r;
}

fn loadK4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = k[base + d + c]; } }
  return r;
}

fn loadV4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = v[base + d + c]; } }
  return r;
}

// Natural-log log-sum-exp of a row from its online-softmax state in log2 units: running max m and
// running Σ 2^(score − m).
fn lseOf(m: f32, l: f32) -> f32 {
  return (m + log2(l)) * LN2;
}
