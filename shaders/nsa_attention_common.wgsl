// NSA branch attention, shared part of the forward, dQ and dK/dV kernels of
// both variants (src/kernels/nsa-attention.ts prepends it,
// after attention_common.wgsl): the uniform, the branch codes and the block
// arithmetic of docs/nsa-spec.md. Scores are in natural-log units everywhere: s = q·k/√DK, the
// forward's online softmax keeps the running max m of s and Σ exp(s − m), lse = m + log(Σ), and the
// backward recomputes P = exp(s − lse). (A log2-unit max converted back to an lse loses about
// ulp(|s|) per conversion, which at large |s| is a visible error in P.) Index conventions:
//   q [B,T,H,DK], k/v [B,S,G,DK|DV] with S = T (sel, win) or S = Ncmp(T) (cmp: compressed rows),
//   out [B,T,H,DV], lse [B,H,T]; head i belongs to group floor(i / hpg).

const CMP: u32 = 0u;
const SEL: u32 = 1u;
const WIN: u32 = 2u;

// Natural-log log-sum-exp of a row from its online-softmax state: running max m and Σ exp(s − m).
fn lseNat(m: f32, l: f32) -> f32 {
  return m + log(l);
}

// P of a key from its raw q·k and the row's staged lse, for the backward loops that take them from
// the includer (attention_keys.wgsl, attention_rows_dq.wgsl): natural-log units throughout, so the
// staged lse is the lse itself and no log2 round trip enters P.
fn stagedLse(lse: f32) -> f32 { return lse; }
fn keyProb(dot: f32, z: f32) -> f32 { return exp(dot * P.scale - z); }

// ncmp(t): compressed blocks visible to query t (block k ends at k·d + l − 1 ≤ t).
fn ncmp(t: u32) -> u32 {
  if (t + 1u < P.l) { return 0u; }
  return (t + 1u - P.l) / P.d + 1u;
}

// The keys of query t in the two branches whose keys are one contiguous range, [keyLo, keyHi):
// cmp the compressed rows 0 .. ncmp(t) − 1, win the positions t + 1 − min(w, t + 1) .. t.
fn keyLo(t: u32) -> u32 {
  if (P.branch == WIN) { return t + 1u - min(P.w, t + 1u); }
  return 0u;
}

fn keyHi(t: u32) -> u32 {
  if (P.branch == WIN) { return t + 1u; }
  return ncmp(t);
}
