// Causal depthwise convolution over time on x [rows, C], row r at position r % T of its sequence
// (docs/nsa-spec.md 3.1): out[r, c] = Σ_j w[c, j] · x[r − (K − 1) + j, c] for the taps j whose row
// lies in the same sequence (position ≥ 0), summed in ascending j; w is [C, K] (torch's depthwise
// Conv1d weight [C, 1, K]), tap K − 1 the current token.
// `forward` and `backwardInput` run one invocation per (row, channel); `backwardWeight` one
// workgroup per (channel, tap) that strides over the rows and reduces its lanes in a fixed tree,
// so the weight gradient has the same bits on every run (no atomics).
// Each product is added with an explicit fma: a compiler that fused some a·b + c and not others
// would give decode and prefill different bits.

override WG: u32 = 64;

fn rowPos(r: u32) -> u32 {
  return r % P.T;
}

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.rows * P.C) { return; }
  let r = i / P.C;
  let c = i % P.C;
  let pos = rowPos(r);
  var acc = 0.0;
  for (var j = 0u; j < P.K; j++) {
    let back = P.K - 1u - j;
    if (back <= pos) { acc = fma(w[c * P.K + j], x[(r - back) * P.C + c], acc); }
  }
  out[i] = acc;
}

// dx[r, c] = Σ_j w[c, j] · dout[r + (K − 1) − j, c] over the rows still in r's sequence.
@compute @workgroup_size(WG)
fn backwardInput(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.rows * P.C) { return; }
  let r = i / P.C;
  let c = i % P.C;
  let pos = rowPos(r);
  var acc = 0.0;
  for (var j = 0u; j < P.K; j++) {
    let ahead = P.K - 1u - j;
    if (pos + ahead < P.T) { acc = fma(w[c * P.K + j], dout[(r + ahead) * P.C + c], acc); }
  }
  dx[i] = acc;
}

var<workgroup> partial: array<f32, WG>;

// dw[c, j] (+)= Σ_r dout[r, c] · convIn[r − (K − 1) + j, c] (convIn: the forward's x): lane l sums rows l, l + WG, … in order,
// then the lanes are added in a fixed tree.
@compute @workgroup_size(WG)
fn backwardWeight(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let cj = wid.x + wid.y * nwg.x;
  let inRange = cj < P.C * P.K;
  let c = cj / P.K;
  let j = cj % P.K;
  let back = P.K - 1u - j;
  var acc = 0.0;
  if (inRange) {
    for (var r = lane; r < P.rows; r += WG) {
      if (back <= rowPos(r)) { acc = fma(dout[r * P.C + c], convIn[(r - back) * P.C + c], acc); }
    }
  }
  partial[lane] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lane < s) { partial[lane] = partial[lane] + partial[lane + s]; }
    workgroupBarrier();
  }
  if (inRange && lane == 0u) {
    dw[cj] = select(partial[0], dw[cj] + partial[0], P.accumulate != 0u);
  }
}
