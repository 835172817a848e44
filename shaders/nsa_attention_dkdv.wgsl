// NSA branch attention, backward part 3: dK and dV per key, key-outer (after
// nsa_attention_common.wgsl; delta and lse come from the earlier passes). A workgroup owns KB
// consecutive keys of one (batch b, group g) — wid = (chunk, g, b); a sel chunk never crosses a
// selection block — and loops over the queries that read them, in ascending t:
//   win: t ∈ [s, s + w − 1];  cmp: t ≥ k·d + l − 1;  sel: the reverse index of (b, g, block).
// Rows r = m·hpg + i (m-th query, head i of the group) are staged BQ at a time. NS threads share a
// key, each holding a 1/NS slice of its k, v, dK and dV columns; with NS > 1 they write partial
// q·k and dO·v per staged row, then each sums the NS partials in a fixed order (the NS threads
// agree bit for bit). Then
//   P = exp(q·k/√DK − lse),  dV += P dO,  dS = P (dO·v − delta),  dK += dS q / √DK.
// Every output element has one writer and a fixed summation order: no atomics, same bits.
// Bindings: 1 q, 2 k, 3 v, 4 lse, 5 dout, 6 delta, then per entry point —
//   keyGrads (cmp, win): 7 gradK, 8 gradV
//   keyGradsSel:         7 gradOut, 8 rev. The reverse index costs a binding, so sel runs twice:
//                        P.want = 1 (gradOut = gradK) and P.want = 2 (gradOut = gradV). rev holds
//                        the offsets [B·G·nB + 1] then the ascending query lists from P.revBase.

@group(0) @binding(1) var<storage, read_write> q: array<f32>;
@group(0) @binding(2) var<storage, read_write> k: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read_write> dout: array<f32>;
@group(0) @binding(6) var<storage, read_write> delta: array<f32>;
@group(0) @binding(7) var<storage, read_write> gradK: array<f32>;
@group(0) @binding(8) var<storage, read_write> gradV: array<f32>;
@group(0) @binding(7) var<storage, read_write> gradOut: array<f32>;
@group(0) @binding(8) var<storage, read_write> rev: array<i32>;

override DK: u32;
override DV: u32;
override DK4: u32;   // ceil(DK / 4)
override DV4: u32;   // ceil(DV / 4)
override NS: u32;    // threads per key
override KB: u32;    // keys per workgroup
override KC4: u32;   // vec4 columns of k per thread, ceil(DK4 / NS) ≤ CMAX
override VC4: u32;   // vec4 columns of v per thread, ceil(DV4 / NS) ≤ CMAX
override BQ: u32;    // rows per staged tile (16 KiB budget: see the wrapper)
override WG: u32 = NS * KB;

const CMAX: u32 = 8u;
const NONE: u32 = 0xffffffffu;

// Staged rows, stride NS·KC4 (resp. NS·VC4) vec4 ≥ DK4, zero-padded so every slice reads in bounds.
var<workgroup> qs: array<vec4<f32>, BQ * NS * KC4>;
var<workgroup> dos: array<vec4<f32>, BQ * NS * VC4>;
var<workgroup> rowT: array<u32, BQ>;       // query position, NONE past the list
var<workgroup> rowLse: array<f32, BQ>;     // lse · log2(e)
var<workgroup> rowDelta: array<f32, BQ>;
// [slice][row][key] partial q·k and dO·v; only NS > 1 needs them (workgroup memory is not free:
// it is zero-initialised, and SwiftShader's compile time grows with it).
var<workgroup> partS: array<f32, select(1u, BQ * WG, NS > 1u)>;
var<workgroup> partD: array<f32, select(1u, BQ * WG, NS > 1u)>;
var<workgroup> listStart: u32;
var<workgroup> listLen: u32;

fn loadQ4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = q[base + d + c]; } }
  return r;
}

fn loadK4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DK) { r[c] = k[base + d + c]; } }
  return r;
}

fn loadV4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = v[base + d + c]; } }
  return r;
}

fn loadDout4(base: u32, d: u32) -> vec4<f32> {
  var r = vec4<f32>(0.0);
  for (var c = 0u; c < 4u; c++) { if (d + c < DV) { r[c] = dout[base + d + c]; } }
  return r;
}

// First key row of chunk x (position; compressed block for cmp). Sel chunks tile each block.
fn chunkFirst(x: u32) -> u32 {
  if (P.branch == SEL) { return (x / P.cpb) * P.lSel + (x % P.cpb) * KB; }
  return x * KB;
}

fn chunkEnd(x: u32, first: u32) -> u32 {
  var e = min(first + KB, P.S);
  if (P.branch == SEL) { e = min(e, (x / P.cpb + 1u) * P.lSel); }
  return e;
}

// Does query t read key row `key`? (For sel, t is on the block's list: it selected the block.)
fn reads(key: u32, t: u32) -> bool {
  if (P.branch == CMP) { return t + 1u >= key * P.d + P.l; }
  if (P.branch == WIN) { return t >= key && t - key < P.w; }
  return t >= key;
}

// Loads q, dO, lse and delta of the staged rows r0 + x whose query positions are in rowT.
fn stageRows(b: u32, g: u32, r0: u32, lid: u32) {
  let h = P.hpg;
  let QS = NS * KC4;
  let VS = NS * VC4;
  for (var x = lid; x < BQ * QS; x += WG) {
    let rr = x / QS;
    let col = x % QS;
    let t = rowT[rr];
    var val = vec4<f32>(0.0);
    if (t != NONE && col < DK4) { val = loadQ4(((b * P.T + t) * P.H + g * h + (r0 + rr) % h) * DK, col * 4u); }
    qs[x] = val;
  }
  for (var x = lid; x < BQ * VS; x += WG) {
    let rr = x / VS;
    let col = x % VS;
    let t = rowT[rr];
    var val = vec4<f32>(0.0);
    if (t != NONE && col < DV4) { val = loadDout4(((b * P.T + t) * P.H + g * h + (r0 + rr) % h) * DV, col * 4u); }
    dos[x] = val;
  }
  for (var x = lid; x < BQ; x += WG) {
    let t = rowT[x];
    var z = 0.0;
    var dl = 0.0;
    if (t != NONE) {
      let lrow = (b * P.H + g * P.hpg + (r0 + x) % h) * P.T + t;
      z = lse[lrow] * LOG2E;
      dl = delta[lrow];
    }
    rowLse[x] = z;
    rowDelta[x] = dl;
  }
}

// One staged tile of nRows ≤ BQ rows (a runtime count skips the padding of the last tile).
fn accumulate(
  nRows: u32, key: u32, live: bool, kl: u32, sl: u32,
  kr: ptr<function, array<vec4<f32>, CMAX>>, vr: ptr<function, array<vec4<f32>, CMAX>>,
  dk: ptr<function, array<vec4<f32>, CMAX>>, dv: ptr<function, array<vec4<f32>, CMAX>>,
) {
  let QS = NS * KC4;
  let VS = NS * VC4;
  let wantK = (P.want & 1u) != 0u;
  let wantV = (P.want & 2u) != 0u;
  if (NS == 1u) {
    // One thread per key: whole dot products, no exchange.
    for (var x = 0u; x < nRows; x++) {
      let t = rowT[x];
      if (!live || t == NONE || !reads(key, t)) { continue; }
      var a = vec4<f32>(0.0);
      for (var c = 0u; c < KC4; c++) { a = fma((*kr)[c], qs[x * QS + c], a); }
      let p = exp2((a.x + a.y + a.z + a.w) * P.scaleLog2e - rowLse[x]);
      if (wantV) {
        for (var c = 0u; c < VC4; c++) { (*dv)[c] = fma(vec4<f32>(p), dos[x * VS + c], (*dv)[c]); }
      }
      if (wantK) {
        var e = vec4<f32>(0.0);
        for (var c = 0u; c < VC4; c++) { e = fma((*vr)[c], dos[x * VS + c], e); }
        let ds = vec4<f32>(p * ((e.x + e.y + e.z + e.w) - rowDelta[x]));
        for (var c = 0u; c < KC4; c++) { (*dk)[c] = fma(ds, qs[x * QS + c], (*dk)[c]); }
      }
    }
    return;
  }
  // NS threads per key: partial dot products over each slice, then fixed-order sums.
  for (var x = 0u; x < nRows; x++) {
    var a = vec4<f32>(0.0);
    for (var c = 0u; c < KC4; c++) { a = fma((*kr)[c], qs[x * QS + sl * KC4 + c], a); }
    partS[(sl * BQ + x) * KB + kl] = a.x + a.y + a.z + a.w;
    if (wantK) {
      var e = vec4<f32>(0.0);
      for (var c = 0u; c < VC4; c++) { e = fma((*vr)[c], dos[x * VS + sl * VC4 + c], e); }
      partD[(sl * BQ + x) * KB + kl] = e.x + e.y + e.z + e.w;
    }
  }
  workgroupBarrier();
  for (var x = 0u; x < nRows; x++) {
    let t = rowT[x];
    if (!live || t == NONE || !reads(key, t)) { continue; }
    var sc = 0.0;
    for (var j = 0u; j < NS; j++) { sc += partS[(j * BQ + x) * KB + kl]; }
    let p = exp2(sc * P.scaleLog2e - rowLse[x]);
    if (wantV) {
      for (var c = 0u; c < VC4; c++) { (*dv)[c] = fma(vec4<f32>(p), dos[x * VS + sl * VC4 + c], (*dv)[c]); }
    }
    if (wantK) {
      var dp = 0.0;
      for (var j = 0u; j < NS; j++) { dp += partD[(j * BQ + x) * KB + kl]; }
      let ds = vec4<f32>(p * (dp - rowDelta[x]));
      for (var c = 0u; c < KC4; c++) { (*dk)[c] = fma(ds, qs[x * QS + sl * KC4 + c], (*dk)[c]); }
    }
  }
}

fn loadKey(b: u32, g: u32, key: u32, sl: u32, kr: ptr<function, array<vec4<f32>, CMAX>>, vr: ptr<function, array<vec4<f32>, CMAX>>) {
  let kBase = ((b * P.S + key) * P.G + g) * DK;
  let vBase = ((b * P.S + key) * P.G + g) * DV;
  for (var c = 0u; c < KC4; c++) {
    let col = sl * KC4 + c;
    if (col < DK4) { (*kr)[c] = loadK4(kBase, col * 4u); }
  }
  for (var c = 0u; c < VC4; c++) {
    let col = sl * VC4 + c;
    if (col < DV4) { (*vr)[c] = loadV4(vBase, col * 4u); }
  }
}

@compute @workgroup_size(WG)
fn keyGrads(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = wid.y;
  let b = wid.z;
  let h = P.hpg;
  let first = chunkFirst(wid.x);
  let end = chunkEnd(wid.x, first);
  let kl = lid % KB;
  let sl = lid / KB;
  let key = first + kl;
  let live = key < end;
  var kr: array<vec4<f32>, CMAX>;
  var vr: array<vec4<f32>, CMAX>;
  var dk: array<vec4<f32>, CMAX>;
  var dv: array<vec4<f32>, CMAX>;
  loadKey(b, g, min(key, end - 1u), sl, &kr, &vr);   // dead threads shadow the last key, never write

  // The chunk's readers are t ∈ [tFirst, tEnd), ascending.
  var tFirst = first;
  var tEnd = min(P.T, end - 1u + P.w);
  if (P.branch == CMP) {
    tFirst = first * P.d + P.l - 1u;
    tEnd = P.T;
  }
  let rows = (tEnd - tFirst) * h;
  for (var r0 = 0u; r0 < rows; r0 += BQ) {
    workgroupBarrier();   // the previous tile is consumed
    for (var x = lid; x < BQ; x += WG) { rowT[x] = select(NONE, tFirst + (r0 + x) / h, r0 + x < rows); }
    workgroupBarrier();
    stageRows(b, g, r0, lid);
    workgroupBarrier();
    accumulate(min(BQ, rows - r0), key, live, kl, sl, &kr, &vr, &dk, &dv);
  }

  if (!live) { return; }
  let kBase = ((b * P.S + key) * P.G + g) * DK;
  let vBase = ((b * P.S + key) * P.G + g) * DV;
  for (var c = 0u; c < KC4; c++) {
    for (var e = 0u; e < 4u; e++) {
      let d = (sl * KC4 + c) * 4u + e;
      if (d < DK) { gradK[kBase + d] = dk[c][e] * P.scale; }
    }
  }
  for (var c = 0u; c < VC4; c++) {
    for (var e = 0u; e < 4u; e++) {
      let d = (sl * VC4 + c) * 4u + e;
      if (d < DV) { gradV[vBase + d] = dv[c][e]; }
    }
  }
}

@compute @workgroup_size(WG)
fn keyGradsSel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = wid.y;
  let b = wid.z;
  let h = P.hpg;
  let first = chunkFirst(wid.x);
  let end = chunkEnd(wid.x, first);
  let kl = lid % KB;
  let sl = lid / KB;
  let key = first + kl;
  let live = key < end;
  var kr: array<vec4<f32>, CMAX>;
  var vr: array<vec4<f32>, CMAX>;
  var dk: array<vec4<f32>, CMAX>;
  var dv: array<vec4<f32>, CMAX>;
  loadKey(b, g, min(key, end - 1u), sl, &kr, &vr);

  // The block's list, from its first query ≥ the chunk's first key (binary search).
  if (lid == 0u) {
    let r = (b * P.G + g) * P.nB + wid.x / P.cpb;
    var lo = u32(rev[r]);
    var hi = u32(rev[r + 1u]);
    let stop = hi;
    while (lo < hi) {
      let mid = (lo + hi) / 2u;
      if (u32(rev[P.revBase + mid]) < first) { lo = mid + 1u; } else { hi = mid; }
    }
    listStart = lo;
    listLen = stop - lo;
  }
  let start = workgroupUniformLoad(&listStart);
  let rows = workgroupUniformLoad(&listLen) * h;
  for (var r0 = 0u; r0 < rows; r0 += BQ) {
    workgroupBarrier();   // the previous tile is consumed
    for (var x = lid; x < BQ; x += WG) {
      var t = NONE;
      if (r0 + x < rows) { t = u32(rev[P.revBase + start + (r0 + x) / h]); }
      rowT[x] = t;
    }
    workgroupBarrier();
    stageRows(b, g, r0, lid);
    workgroupBarrier();
    accumulate(min(BQ, rows - r0), key, live, kl, sl, &kr, &vr, &dk, &dv);
  }

  if (!live) { return; }
  if ((P.want & 1u) != 0u) {
    let kBase = ((b * P.S + key) * P.G + g) * DK;
    for (var c = 0u; c < KC4; c++) {
      for (var e = 0u; e < 4u; e++) {
        let d = (sl * KC4 + c) * 4u + e;
        if (d < DK) { gradOut[kBase + d] = dk[c][e] * P.scale; }
      }
    }
  } else {
    let vBase = ((b * P.S + key) * P.G + g) * DV;
    for (var c = 0u; c < VC4; c++) {
      for (var e = 0u; e < 4u; e++) {
        let d = (sl * VC4 + c) * 4u + e;
        if (d < DV) { gradOut[vBase + d] = dv[c][e]; }
      }
    }
  }
}
