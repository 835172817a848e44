// GPU decode, shared part (src/kernels/decode.ts prepends it to each decode kernel): one new query
// per sequence, B sequences in lockstep at position t = st[0] (written before each submit, so the
// dispatches are built once). Caches are [B, rows, G, D]: rows = capacity for the full caches
// (position s at row s) and w for a window ring (position s at row s % w); the compressed cache is
// [B, Nmax, G, D]. Block arithmetic as docs/nsa-spec.md and shaders/nsa_select.wgsl.

const CMP: u32 = 0u;
const SEL: u32 = 1u;
const WIN: u32 = 2u;
const FULL: u32 = 3u; // dense attention over positions 0..t
const NEG_BIG: f32 = -3.0e38;

const GELU_C: f32 = 0.7978845608028654; // sqrt(2/π)
const GELU_A: f32 = 0.044715;

// tanh with its argument clamped, as shaders/nsa_compress.wgsl: tanh(±15) is ±1 in f32.
fn tanhSafe(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
fn gelu(x: f32) -> f32 { return 0.5 * x * (1.0 + tanhSafe(GELU_C * (x + GELU_A * x * x * x))); }

// ncmp(t): compressed blocks visible to query t (block k ends at k·d + l − 1 ≤ t).
fn ncmp(t: u32) -> u32 {
  if (t + 1u < P.l) { return 0u; }
  return (t + 1u - P.l) / P.d + 1u;
}

// Whether feeding position t completes compressed block (t + 1 − l) / d.
fn emits(t: u32) -> bool { return t + 1u >= P.l && (t + 1u - P.l) % P.d == 0u; }

// Lanes per workgroup of every decode kernel; reduceMax: the max of the lanes' x by a fixed tree
// (select and attend; call it in uniform control flow).
const WG: u32 = 64u;
var<workgroup> redF: array<f32, WG>;

fn reduceMax(lane: u32, x: f32) -> f32 {
  redF[lane] = x;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lane < s) { redF[lane] = max(redF[lane], redF[lane + s]); }
    workgroupBarrier();
  }
  let r = redF[0];
  workgroupBarrier();
  return r;
}
