// Attention dK/dV, key-outer: the part the dense kernel (attention_bwd_dkdv.wgsl) and the NSA
// group kernel (nsa_attention_dkdv.wgsl) share, after attention_common.wgsl and
// attention_bwd_common.wgsl. A workgroup owns KB consecutive key rows [first, end) of one (batch b,
// group g); NS threads share a key, each holding a 1/NS slice (KC4, VC4 vec4 columns) of its k, v,
// dK and dV in private memory. The query rows that read the keys are staged BQ at a time in
// ascending t, the heads innermost (row r0 + x is head h0 + (r0 + x) mod hn of the group; all hpg
// heads unless the kernel splits them over workgroups): the kernel
// writes their query positions to rowT, then addRows loads their q, dO, lse and delta and adds
//   P = exp(q·k/√DK − lse),  dV += P dO,  dS = P (dO·v − delta),  dK += dS q  (1/√DK at the store).
// With NS > 1 the threads of a key write partial q·k and dO·v per staged row, then each sums the
// NS partials in a fixed order (the NS threads agree bit for bit). Every output element has one
// writer and a fixed summation order: no atomics, same bits.
// The kernel provides the uniform P (fields T, H, G, hpg, scale) and
//   fn reads(key: u32, t: u32) -> bool        — does query t read key row `key`?
//   fn stagedLse(lse: f32) -> f32             — a row's lse as staged in rowLse (its own units)
//   fn keyProb(dot: f32, z: f32) -> f32       — P of the raw q·k `dot` given the staged z.
// Outputs: gradK (binding 7) and gradV (binding 8), written by storeKeyGrads.

override NS: u32;    // threads per key: 1, 2 or 4
override KB: u32;    // keys per workgroup
override KC4: u32;   // vec4 columns of k per thread, ceil(DK4 / NS) ≤ CMAX
override VC4: u32;   // vec4 columns of v per thread, ceil(DV4 / NS) ≤ CMAX
override BQ: u32;    // query rows per staged tile (16 KiB budget: see the wrappers)
override WG: u32 = NS * KB;

const CMAX: u32 = 8u;
const NONE: u32 = 0xffffffffu;

// Staged rows, stride NS·KC4 (resp. NS·VC4) vec4 ≥ DK4, zero-padded so every slice reads in bounds.
var<workgroup> qs: array<vec4<f32>, BQ * NS * KC4>;
var<workgroup> dos: array<vec4<f32>, BQ * NS * VC4>;
var<workgroup> rowT: array<u32, BQ>;       // query position, NONE past the list
var<workgroup> rowLse: array<f32, BQ>;     // stagedLse(lse)
var<workgroup> rowDelta: array<f32, BQ>;
// [slice][row][key] partial q·k and dO·v; only NS > 1 needs them (workgroup memory is not free:
// it is zero-initialised, and SwiftShader's compile time grows with it).
var<workgroup> partS: array<f32, select(1u, BQ * WG, NS > 1u)>;
var<workgroup> partD: array<f32, select(1u, BQ * WG, NS > 1u)>;

// The thread's slices of its key's k, v (loaded by beginKeys) and of dK, dV (accumulated).
var<private> kr: array<vec4<f32>, CMAX>;
var<private> vr: array<vec4<f32>, CMAX>;
var<private> dk: array<vec4<f32>, CMAX>;
var<private> dv: array<vec4<f32>, CMAX>;

struct KeyThread {
  key: u32,    // key row (per sequence) of the thread
  row: u32,    // its row of k, v [B,S,G,·]; dead threads shadow the chunk's last key
  kl: u32,     // key within the workgroup
  sl: u32,     // column slice
  live: bool,  // key < end: only live threads write
  h0: u32,     // the heads of the group this workgroup reads: h0 … h0 + hn − 1 (all by default)
  hn: u32,
  out: u32,    // its row of gradK, gradV (row by default; a head split writes per-head parts)
}

// The thread's key among [first, end) of (b, g), S key rows per sequence; loads its k, v slices.
fn beginKeys(b: u32, g: u32, S: u32, first: u32, end: u32, lid: u32) -> KeyThread {
  let kl = lid % KB;
  let sl = lid / KB;
  let key = first + kl;
  let row = (b * S + min(key, end - 1u)) * P.G + g;
  for (var c = 0u; c < KC4; c++) {
    let col = sl * KC4 + c;
    if (col < DK4) { kr[c] = loadK4(row * DK, col * 4u); }
  }
  for (var c = 0u; c < VC4; c++) {
    let col = sl * VC4 + c;
    if (col < DV4) { vr[c] = loadV4(row * DV, col * 4u); }
  }
  return KeyThread(key, row, kl, sl, key < end, 0u, P.hpg, row);
}

// Loads q, dO, lse and delta of the staged rows r0 + x whose query positions are in rowT; row r is
// head h0 + r mod hn of the group.
fn stageRows(b: u32, g: u32, kt: KeyThread, r0: u32, lid: u32) {
  let h = P.hpg;
  let QS = NS * KC4;
  let VS = NS * VC4;
  for (var x = lid; x < BQ * QS; x += WG) {
    let rr = x / QS;
    let col = x % QS;
    let t = rowT[rr];
    var val = vec4<f32>(0.0);
    if (t != NONE && col < DK4) { val = loadQ4(((b * P.T + t) * P.H + g * h + kt.h0 + (r0 + rr) % kt.hn) * DK, col * 4u); }
    qs[x] = val;
  }
  for (var x = lid; x < BQ * VS; x += WG) {
    let rr = x / VS;
    let col = x % VS;
    let t = rowT[rr];
    var val = vec4<f32>(0.0);
    if (t != NONE && col < DV4) { val = loadDout4(((b * P.T + t) * P.H + g * h + kt.h0 + (r0 + rr) % kt.hn) * DV, col * 4u); }
    dos[x] = val;
  }
  for (var x = lid; x < BQ; x += WG) {
    let t = rowT[x];
    var z = 0.0;
    var dl = 0.0;
    if (t != NONE) {
      let lrow = (b * P.H + g * h + kt.h0 + (r0 + x) % kt.hn) * P.T + t;
      z = stagedLse(lse[lrow]);
      dl = delta[lrow];
    }
    rowLse[x] = z;
    rowDelta[x] = dl;
  }
}

// One staged tile of nRows ≤ BQ rows (a runtime count skips the padding of the last tile).
// want: bit 0 accumulates dK, bit 1 dV.
fn accumulate(nRows: u32, kt: KeyThread, want: u32) {
  let QS = NS * KC4;
  let VS = NS * VC4;
  let wantK = (want & 1u) != 0u;
  let wantV = (want & 2u) != 0u;
  if (NS == 1u) {
    // One thread per key: whole dot products, no exchange.
    for (var x = 0u; x < nRows; x++) {
      let t = rowT[x];
      if (!kt.live || t == NONE || !reads(kt.key, t)) { continue; }
      var a = vec4<f32>(0.0);
      for (var c = 0u; c < KC4; c++) { a = fma(kr[c], qs[x * QS + c], a); }
      let p = keyProb(a.x + a.y + a.z + a.w, rowLse[x]);
      if (wantV) {
        for (var c = 0u; c < VC4; c++) { dv[c] = fma(vec4<f32>(p), dos[x * VS + c], dv[c]); }
      }
      if (wantK) {
        var e = vec4<f32>(0.0);
        for (var c = 0u; c < VC4; c++) { e = fma(vr[c], dos[x * VS + c], e); }
        let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - rowDelta[x]));
        for (var c = 0u; c < KC4; c++) { dk[c] = fma(ds, qs[x * QS + c], dk[c]); }
      }
    }
    return;
  }
  // NS threads per key: partial dot products over each slice, then fixed-order sums.
  let sl = kt.sl;
  let kl = kt.kl;
  for (var x = 0u; x < nRows; x++) {
    var a = vec4<f32>(0.0);
    for (var c = 0u; c < KC4; c++) { a = fma(kr[c], qs[x * QS + sl * KC4 + c], a); }
    partS[(sl * BQ + x) * KB + kl] = a.x + a.y + a.z + a.w;
    if (wantK) {
      var e = vec4<f32>(0.0);
      for (var c = 0u; c < VC4; c++) { e = fma(vr[c], dos[x * VS + sl * VC4 + c], e); }
      partD[(sl * BQ + x) * KB + kl] = e.x + e.y + e.z + e.w;
    }
  }
  workgroupBarrier();
  for (var x = 0u; x < nRows; x++) {
    let t = rowT[x];
    if (!kt.live || t == NONE || !reads(kt.key, t)) { continue; }
    var sc = 0.0;
    for (var j = 0u; j < NS; j++) { sc += partS[(j * BQ + x) * KB + kl]; }
    let p = keyProb(sc, rowLse[x]);
    if (wantV) {
      for (var c = 0u; c < VC4; c++) { dv[c] = fma(vec4<f32>(p), dos[x * VS + sl * VC4 + c], dv[c]); }
    }
    if (wantK) {
      var dp = 0.0;
      for (var j = 0u; j < NS; j++) { dp += partD[(j * BQ + x) * KB + kl]; }
      let ds = vec4<f32>(p * (dp - rowDelta[x]));
      for (var c = 0u; c < KC4; c++) { dk[c] = fma(ds, qs[x * QS + sl * KC4 + c], dk[c]); }
    }
  }
}

// The tile of rows r0 .. r0 + BQ − 1 (of rows), once the kernel has written their rowT: stages
// them and adds their terms (want as in accumulate). Workgroup-uniform: r0, rows, want.
fn addRows(b: u32, g: u32, kt: KeyThread, r0: u32, rows: u32, lid: u32, want: u32) {
  workgroupBarrier();
  stageRows(b, g, kt, r0, lid);
  workgroupBarrier();
  accumulate(min(BQ, rows - r0), kt, want);
}

// dK and dV over the readers t ∈ [t0, t1) (ascending; the workgroup's hn = kt.hn heads innermost,
// passed apart: kt is per thread, and the loop bound must be uniform). Uniform t0, t1, hn.
fn readRange(b: u32, g: u32, kt: KeyThread, t0: u32, t1: u32, hn: u32, lid: u32) {
  let h = hn;
  let rows = (t1 - t0) * h;
  for (var r0 = 0u; r0 < rows; r0 += BQ) {
    workgroupBarrier();   // the previous tile is consumed
    for (var x = lid; x < BQ; x += WG) { rowT[x] = select(NONE, t0 + (r0 + x) / h, r0 + x < rows); }
    addRows(b, g, kt, r0, rows, lid, 3u);
  }
}

// Writes the thread's slices of dK (scaled by 1/√DK) to gradK and of dV to gradV at row kt.out
// (live threads).
fn storeKeyGrads(kt: KeyThread) {
  if (!kt.live) { return; }
  for (var c = 0u; c < KC4; c++) {
    for (var e = 0u; e < 4u; e++) {
      let d = (kt.sl * KC4 + c) * 4u + e;
      if (d < DK) { gradK[kt.out * DK + d] = dk[c][e] * P.scale; }
    }
  }
  for (var c = 0u; c < VC4; c++) {
    for (var e = 0u; e < 4u; e++) {
      let d = (kt.sl * VC4 + c) * 4u + e;
      if (d < DV) { gradV[kt.out * DV + d] = dv[c][e]; }
    }
  }
}
