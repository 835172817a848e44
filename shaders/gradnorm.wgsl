// Global gradient L2 norm and clip scale, deterministic, in two kinds of dispatch:
//   partial  (one per gradient range): workgroup w sums squares of src[w·chunk, (w+1)·chunk) into
//            dst[base + w] (dst = partials); chunk (P.chunk, a multiple of WG) grows with the range
//            (src/kernels/gradnorm.ts, gradNormChunk), so the finalize reads a few thousand partials.
//   finalize (one workgroup): sums src[0, n) (src = partials), then writes dst = stats:
//            stats[0] = sqrt(Σ) = ‖g‖₂; stats[1] = clip scale, or 0 when the norm is not finite.
// Both are a fixed-order per-thread sum followed by a fixed tree: same inputs, same bits.
// Every storage binding is read_write (see residual.wgsl).

override WG: u32 = 256; // a power of two
const BLOCK: u32 = 32u;

var<workgroup> part: array<f32, WG>;

// Fixed tree over part[]; the total ends in part[0]. Uniform control flow only.
fn tree_sum(t: u32) -> f32 {
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (t < stride) { part[t] += part[t + stride]; }
  }
  workgroupBarrier();
  return part[0];
}

@compute @workgroup_size(WG)
fn partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_id) lid: vec3<u32>) {
  let w = wid.x + wid.y * nwg.x;
  let chunk = P.chunk;
  if (w * chunk >= P.n) { return; } // the folded grid may overshoot; uniform per workgroup
  let t = lid.x;
  let start = w * chunk + t;
  let end = min((w + 1u) * chunk, P.n);
  var acc = 0.0;
  for (var i = start; i < end; i += WG) {
    let g = src[i];
    acc += g * g;
  }
  part[t] = acc;
  let total = tree_sum(t);
  if (t == 0u) { dst[P.base + w] = total; }
}

// Inf and NaN have an all-ones exponent. Tested on the bits: fast-math compilers may fold x != x.
fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(WG)
fn finalize(@builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.x;
  let n = P.n;
  let count = select(0u, (n - t + WG - 1u) / WG, t < n);
  var outer = 0.0;
  for (var k0 = 0u; k0 < count; k0 += BLOCK) {
    var inner = 0.0;
    let k0End = min(k0 + BLOCK, count);
    for (var k = k0; k < k0End; k++) { inner += src[t + k * WG]; }
    outer += inner;
  }
  part[t] = outer;
  let total = tree_sum(t);
  if (t == 0u) {
    let norm = sqrt(total);
    var scale = 1.0;
    if (!is_finite(total)) {
      scale = 0.0;
    } else if (P.maxNorm > 0.0 && norm > P.maxNorm) {
      scale = P.maxNorm / (norm + 1e-6);
    }
    dst[0] = norm;
    dst[1] = scale;
  }
}
