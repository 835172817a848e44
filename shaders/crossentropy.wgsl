// Fused softmax cross-entropy, one workgroup per row n < N of logits [N, V]:
//   loss[n]      = logsumexp(logits[n, :]) - logits[n, target[n]]
//   dlogits[n,:] = (softmax(logits[n, :]) - onehot(target[n])) * gradScale
// Pass 1 (strided, one read): per-thread running max with a rescaled sum of exp; a fixed tree
// merges the WG (max, sum) pairs. Pass 2 (strided): the gradient. Entry point `xent` writes
// dlogits; `xent_inplace` overwrites logits with the gradient (WebGPU rejects two writable
// bindings of overlapping ranges, so in place is a separate entry point without a dlogits binding).
// A target of -1 (IGNORE_TARGET: a position the loss does not count) gives loss 0 and a zero
// gradient row. Any other target outside [0, V), or a NaN / +Inf logit, makes that row's loss and whole gradient row NaN,
// so the step's NaN guard skips the step and the loss curve shows it. Checked on the bits: GPU exp()
// need not propagate NaN (SwiftShader's returns Inf), and fast-math may fold x != x.
// Every storage binding is read_write (see residual.wgsl).

override WG: u32 = 256; // a power of two

// Start value of a running max: finite, so merging two empty lanes gives exp(0) * 0 = 0, never NaN.
const NEG_MAX: f32 = -3.4028234663852886e38;

var<workgroup> wMax: array<f32, WG>;
var<workgroup> wSum: array<f32, WG>;
var<workgroup> wBad: array<u32, WG>;

struct Row {
  base: u32,     // index of logits[n, 0]
  tgt: u32,      // the target column, valid only when ok
  ok: bool,      // target in [0, V) and no NaN / +Inf logit
  ignored: bool, // target -1: loss 0, gradient 0
  m: f32,        // row max
  invSum: f32,   // 1 / sum exp(x - m)
}

fn nanF32() -> f32 {
  var bits = 0x7fc00000u; // a runtime value: const-evaluating a NaN is a shader-creation error
  return bitcast<f32>(bits);
}

// Pass 1 and the loss. Must be called from uniform control flow (it has barriers). Ends with a
// storage + workgroup barrier, so every read of logits in it happens before any gradient write.
fn row_stats(row: u32, t: u32) -> Row {
  let V = P.V;
  let base = row * V;
  let tg = targets[row];
  let ok = tg >= 0 && u32(tg) < V;
  var xt = 0.0;
  if (t == 0u && ok) { xt = logits[base + u32(tg)]; }

  var m = NEG_MAX;
  var s = 0.0;
  var bad = 0u;
  for (var j = t; j < V; j += WG) {
    let x = logits[base + j];
    let bits = bitcast<u32>(x);
    bad |= u32((bits & 0x7fffffffu) > 0x7f800000u || bits == 0x7f800000u); // NaN or +Inf
    if (x > m) {
      s = s * exp(m - x) + 1.0;
      m = x;
    } else {
      s += exp(x - m);
    }
  }
  wMax[t] = m;
  wSum[t] = s;
  wBad[t] = bad;
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (t < stride) {
      let m1 = wMax[t];
      let m2 = wMax[t + stride];
      let mm = max(m1, m2);
      wSum[t] = wSum[t] * exp(m1 - mm) + wSum[t + stride] * exp(m2 - mm);
      wMax[t] = mm;
      wBad[t] |= wBad[t + stride];
    }
  }
  storageBarrier();
  workgroupBarrier();
  let rm = wMax[0];
  let rs = wSum[0];
  let rowOk = ok && wBad[0] == 0u;
  let ignored = tg == -1;
  if (t == 0u) {
    losses[row] = select(select(nanF32(), rm + log(rs) - xt, rowOk), 0.0, ignored);
  }
  return Row(base, u32(tg), rowOk, ignored, rm, 1.0 / rs);
}

fn grad_of(r: Row, j: u32, x: f32) -> f32 {
  if (r.ignored) { return 0.0; }
  if (!r.ok) { return nanF32(); }
  let p = exp(x - r.m) * r.invSum;
  return (p - select(0.0, 1.0, j == r.tgt)) * P.gradScale;
}

fn row_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + wid.y * nwg.x;
}

@compute @workgroup_size(WG)
fn xent(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let row = row_index(wid, nwg);
  if (row >= P.N) { return; }
  let r = row_stats(row, lid.x);
  for (var j = lid.x; j < P.V; j += WG) {
    dlogits[r.base + j] = grad_of(r, j, logits[r.base + j]);
  }
}

@compute @workgroup_size(WG)
fn xent_inplace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_id) lid: vec3<u32>) {
  let row = row_index(wid, nwg);
  if (row >= P.N) { return; }
  let r = row_stats(row, lid.x);
  for (var j = lid.x; j < P.V; j += WG) {
    logits[r.base + j] = grad_of(r, j, logits[r.base + j]);
  }
}
