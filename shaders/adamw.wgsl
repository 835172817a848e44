// AdamW (PyTorch semantics, decoupled weight decay), elementwise over n parameters, with the
// gradient multiplied by the clip scale stats[1] from gradnorm.wgsl:
//   g = grad·stats[1];  p ·= 1 − lr·wd (decay only);  m = β1 m + (1−β1) g;  v = β2 v + (1−β2) g²
//   p −= (lr / (1−β1ᵗ)) · m / (sqrt(v) / sqrt(1−β2ᵗ) + eps)
// Step-dependent factors are computed on the CPU in f64 (adamwHyperWords) and read from the
// shared per-step uniform H. If stats[0] (the gradient norm) is NaN/Inf nothing is written: a bad
// step leaves parameters and moments as they were.
// Every storage binding is read_write (see residual.wgsl).

override WG: u32 = 256;

@compute @workgroup_size(WG)
fn adamw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.n) { return; }
  // NaN/Inf test on the bits: fast-math compilers may fold x != x.
  if ((bitcast<u32>(stats[0]) & 0x7f800000u) == 0x7f800000u) { return; }
  let g = grad[i] * stats[1];
  var p = param[i];
  if (P.decay != 0u) { p *= H.decayMul; }
  let mi = H.beta1 * m[i] + H.oneMinusBeta1 * g;
  let vi = H.beta2 * v[i] + H.oneMinusBeta2 * (g * g);
  m[i] = mi;
  v[i] = vi;
  param[i] = p - H.stepSize * mi / (sqrt(vi) * H.invSqrtBc2 + H.eps);
}
