// Dense attention backward, the head split's last step (after attention_bwd_dkdv.wgsl's
// backwardDkDvSplit): gradK [rows, DK] = Σ_m partK [rows, hpg, DK] and gradV likewise, heads m
// ascending (a fixed order: same bits on every run), one thread per output element of gradK then
// gradV. rows = B·T·G key rows.

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn sumHeads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = gid.x + gid.y * nwg.x * WG;
  let nK = P.rows * P.dk;
  if (x < nK) {
    let r = x / P.dk;
    let c = x % P.dk;
    var s = 0.0;
    for (var m = 0u; m < P.hpg; m++) { s += partK[(r * P.hpg + m) * P.dk + c]; }
    gradK[x] = s;
  } else if (x < nK + P.rows * P.dv) {
    let y = x - nK;
    let r = y / P.dv;
    let c = y % P.dv;
    var s = 0.0;
    for (var m = 0u; m < P.hpg; m++) { s += partV[(r * P.hpg + m) * P.dv + c]; }
    gradV[y] = s;
  }
}
