// NSA compression φ (docs/nsa-spec.md "Compressed branch"), batched over B sequences.
// x [B,T,G,D] (K_cmp after RoPE, or V_cmp); compressed out [B,N,G,D] with N = Ncmp(T); block k
// covers positions [k·d, k·d + l). A compressed row r = (b·N + k)·G + g.
//
// φ = avg: avgForward  out[b,k,g] = mean_{i<l} x[b, k·d + i, g]
//          avgBackward dx[b,s,g] = Σ_{blocks k holding s} dout[b,k,g] / l
// φ = mlp: the dense layers are matmul.wgsl dispatches; this file holds the pieces around them:
//   gather         z[r, i·D + e] = x[b, k·d + i, g, e] + pos[i·D + e]
//   biasGelu       hPre[r, u] += bias[u] (b1); act[r, u] = gelu(hPre[r, u])
//   addBias        out[r, e] += bias[e] (b2)
//   geluBackward   dh[r, u] *= gelu'(hPre[r, u])
//   colSum         dParam[c] += Σ_r dRows[r·cols + c]   (db1, db2, dpos from dh, dout, dz; fixed order)
//   gatherBackward dx[b, s, g, e] = Σ_k dz[r(k), (s − k·d)·D + e] over blocks k holding s
// Gathers loop k ascending; no atomics; same inputs → same bits.
// Every storage binding is read_write (see residual.wgsl).

const WG: u32 = 256u;
const TC: u32 = 16u; // colSum: columns per workgroup
const TL: u32 = 16u; // colSum: row lanes per column; a power of two
var<workgroup> red: array<f32, 256>; // TC × TL

const GELU_C: f32 = 0.7978845608028654; // sqrt(2/π)
const GELU_A: f32 = 0.044715;

// tanh with its argument clamped: some backends compute tanh through exp and overflow to NaN;
// tanh(±15) is ±1 in f32 anyway.
fn tanhSafe(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }

fn gelu(x: f32) -> f32 { return 0.5 * x * (1.0 + tanhSafe(GELU_C * (x + GELU_A * x * x * x))); }

fn geluGrad(x: f32) -> f32 {
  let th = tanhSafe(GELU_C * (x + GELU_A * x * x * x));
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GELU_C * (1.0 + 3.0 * GELU_A * x * x);
}

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

// First and last block holding position s (kHi < kLo when none).
fn blocksOf(s: u32) -> vec2<i32> {
  let lo = max(0, (i32(s) - i32(P.l) + i32(P.d)) / i32(P.d)); // ceil((s − l + 1)/d), clamped at 0
  let hi = min(i32(P.N) - 1, i32(s / P.d));
  return vec2<i32>(lo, hi);
}

@compute @workgroup_size(WG)
fn avgForward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  let e = idx % P.D;
  let kg = idx / P.D;      // (b·N + k)·G + g
  let g = kg % P.G;
  let k = (kg / P.G) % P.N;
  let b = kg / (P.G * P.N);
  var s = 0.0;
  for (var i = 0u; i < P.l; i++) { s += x[((b * P.T + k * P.d + i) * P.G + g) * P.D + e]; }
  out[idx] = s / f32(P.l);
}

@compute @workgroup_size(WG)
fn avgBackward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  let e = idx % P.D;
  let sg = idx / P.D;      // (b·T + s)·G + g
  let g = sg % P.G;
  let s = (sg / P.G) % P.T;
  let b = sg / (P.G * P.T);
  let kr = blocksOf(s);
  let inv = 1.0 / f32(P.l);
  var acc = 0.0;
  for (var k = kr.x; k <= kr.y; k++) { acc += dout[((b * P.N + u32(k)) * P.G + g) * P.D + e] * inv; }
  dx[idx] = acc;
}

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  let lD = P.l * P.D;
  let c = idx % lD;        // i·D + e
  let i = c / P.D;
  let e = c % P.D;
  let kg = idx / lD;
  let g = kg % P.G;
  let k = (kg / P.G) % P.N;
  let b = kg / (P.G * P.N);
  z[idx] = x[((b * P.T + k * P.d + i) * P.G + g) * P.D + e] + pos[c];
}

@compute @workgroup_size(WG)
fn biasGelu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  let h = hPre[idx] + bias[idx % P.cols];
  hPre[idx] = h;
  act[idx] = gelu(h);
}

@compute @workgroup_size(WG)
fn addBias(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  out[idx] += bias[idx % P.cols];
}

@compute @workgroup_size(WG)
fn geluBackward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  dh[idx] *= geluGrad(hPre[idx]);
}

// One workgroup per TC columns; lane y walks rows y, y + TL, … in order, then a fixed tree.
@compute @workgroup_size(TC, TL)
fn colSum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let c = wid.x * TC + lid.x;
  var acc = 0.0;
  if (c < P.cols) {
    for (var r = lid.y; r < P.rows; r += TL) { acc += dRows[r * P.cols + c]; }
  }
  red[lid.y * TC + lid.x] = acc;
  for (var stride = TL / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid.y < stride) { red[lid.y * TC + lid.x] += red[(lid.y + stride) * TC + lid.x]; }
  }
  if (lid.y == 0u && c < P.cols) { dParam[c] += red[lid.x]; }
}

@compute @workgroup_size(WG)
fn gatherBackward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = linear(gid, nwg);
  if (idx >= P.total) { return; }
  let e = idx % P.D;
  let sg = idx / P.D;
  let g = sg % P.G;
  let s = (sg / P.G) % P.T;
  let b = sg / (P.G * P.T);
  let kr = blocksOf(s);
  let lD = P.l * P.D;
  var acc = 0.0;
  for (var k = kr.x; k <= kr.y; k++) {
    let ku = u32(k);
    acc += dz[((b * P.N + ku) * P.G + g) * lD + (s - ku * P.d) * P.D + e];
  }
  dx[idx] = acc;
}
