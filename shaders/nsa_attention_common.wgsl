// NSA branch attention, shared part of the forward, dQ and dK/dV kernels of
// both variants (src/kernels/nsa-attention.ts prepends it,
// after attention_common.wgsl): the uniform, the branch codes and the block
// arithmetic of NSA_SPEC.md. Index conventions:
//   q [B,T,H,DK], k/v [B,S,G,DK|DV] with S = T (sel, win) or S = Ncmp(T) (cmp: compressed rows),
//   out [B,T,H,DV], lse [B,H,T]; head i belongs to group floor(i / hpg).

struct Params {
  branch: u32,       // CMP, SEL or WIN
  T: u32,
  H: u32,
  G: u32,
  hpg: u32,          // heads per group, H / G
  S: u32,            // key rows per sequence: T, or Ncmp(T) for cmp
  l: u32,            // compression block
  d: u32,            // compression stride
  lSel: u32,         // selection block
  nSel: u32,         // selected blocks per (t, g)
  w: u32,            // window
  nB: u32,           // selection blocks per sequence, nb(T − 1)
  cpb: u32,          // dK/dV of sel: key chunks per selection block
  revBase: u32,      // where the reverse index's query lists start in its buffer (B·G·nB + 1)
  negInf: u32,       // bit pattern of −inf: the lse of a query with no keys
  accumulate: u32,   // dQ: 1 adds into gradQ, 0 overwrites it
  want: u32,         // dK/dV: bit 0 computes dK, bit 1 dV
  scaleLog2e: f32,   // log2(e) / sqrt(DK)
  scale: f32,        // 1 / sqrt(DK)
  rows: u32,         // query rows B·T·H (grid of the simple variant's forward and dQ)
  keys: u32,         // key rows B·S·G (grid of the simple variant's dK/dV)
}

@group(0) @binding(0) var<uniform> P: Params;

const CMP: u32 = 0u;
const SEL: u32 = 1u;
const WIN: u32 = 2u;

// ncmp(t): compressed blocks visible to query t (block k ends at k·d + l − 1 ≤ t).
fn ncmp(t: u32) -> u32 {
  if (t + 1u < P.l) { return 0u; }
  return (t + 1u - P.l) / P.d + 1u;
}
