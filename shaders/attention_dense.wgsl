// Dense causal attention with grouped-query heads, the uniform of its three kernels
// (attention_fwd.wgsl, attention_bwd_dq.wgsl, attention_bwd_dkdv.wgsl), after attention_common.wgsl:
// S = T key rows per sequence; head i belongs to group floor(i / hpg).

struct Params {
  T: u32,
  H: u32,
  G: u32,
  hpg: u32,          // heads per group, H / G
  scaleLog2e: f32,   // log2(e) / sqrt(DK)
  scale: f32,        // 1 / sqrt(DK)
}

@group(0) @binding(0) var<uniform> P: Params;
