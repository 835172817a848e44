// Deterministic sum: out[outIndex] (= or +=) scale * sum(x[0..n)). One workgroup, one dispatch.
// Fixed order: thread t sums x[t], x[t+WG], x[t+2WG], ... nested in blocks (BLOCK elements, BLOCK
// blocks, then the rest), so no running f32 sum takes more than ~BLOCK terms until n/WG passes
// BLOCK³ (measured relative error ≤ 1e-7 up to n = 1e6), then a fixed tree over the WG partials.
// Same inputs give the same bits on every run.
// Every storage binding is read_write (see residual.wgsl).

override WG: u32 = 256; // a power of two
const BLOCK: u32 = 32u;

var<workgroup> part: array<f32, WG>;

@compute @workgroup_size(WG)
fn sum(@builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.x;
  let n = P.n;
  // Number of strided elements this thread owns: k = 0..count-1 at index t + k*WG.
  let count = select(0u, (n - t + WG - 1u) / WG, t < n);
  var outer = 0.0;
  for (var k0 = 0u; k0 < count; k0 += BLOCK * BLOCK) {
    var mid = 0.0;
    let k0End = min(k0 + BLOCK * BLOCK, count);
    for (var k1 = k0; k1 < k0End; k1 += BLOCK) {
      var inner = 0.0;
      let k1End = min(k1 + BLOCK, k0End);
      for (var k = k1; k < k1End; k++) { inner += x[t + k * WG]; }
      mid += inner;
    }
    outer += mid;
  }
  part[t] = outer;
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (t < stride) { part[t] += part[t + stride]; }
  }
  if (t == 0u) {
    let s = P.scale * part[0];
    if (P.accumulate != 0u) { out[P.outIndex] += s; } else { out[P.outIndex] = s; }
  }
}
