// Dense attention's probabilities in log2 units, as its forward's online softmax (attention_fwd.wgsl):
// the backward passes stage lse as lse·log2(e) and take P = 2^(q·k·scale·log2(e) − z). The dQ
// (attention_rows_dq.wgsl) and dK/dV (attention_keys.wgsl) loops call these.
fn stagedLse(lse: f32) -> f32 { return lse * LOG2E; }
fn keyProb(dot: f32, z: f32) -> f32 { return exp2(dot * P.scaleLog2e - z); }
