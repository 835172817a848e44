// Decode, top-n selection of the new query on software adapters (after decode_common.wgsl,
// nsa_topn.wgsl, nsa_score_row.wgsl and decode_select_rows.wgsl, its buffers' accessors): one invocation per (b, g), for the single row t = st[0]
// (GPUs run the split form, decode_select_split.wgsl, which gives the same bits).
// 1. Scores: scoreRowSerial of nsa_score_row.wgsl, the function the training kernel
//    (nsa_select.wgsl scoresSerial) runs per (b, t, g) row on these adapters — same inputs, same
//    bits by construction (tests/decode/gpu-decode.test.ts checks scores and selections against
//    it) — into scores[b, g, j < nb], and each head's p_cmp into its row of the attention scratch
//    (pCmp[(b·H + head)·cap + k]: free until the attention kernels run; cap ≥ Nmax ≥ n), where
//    the compressed branch's attend dispatch (next) takes them as its weights.
// 2. The forced blocks and the best rem = min(nSel, nb) − #forced others by (P descending, j
//    ascending), by the scan of nsa_topn.wgsl that nsa_select.wgsl's topN runs too, written
//    ascending and −1 padded to sel[slot + (b·G + g)·nSel + ·].
// Bindings: q [B, H, dk], kc [B, Nmax, G, dk], pCmp [B, H, cap] (the attention scratch),
// scores [B, G, nBmax] (scratch), sel (i32).

// One invocation per (b, g) (the training kernel on these adapters runs scoreRowSerial too).
@compute @workgroup_size(1)
fn selectTopSerial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let bg = wid.x + wid.y * nwg.x;
  if (bg >= P.B * P.G) { return; }
  let t = st[0];
  let bt = t / P.lSel;
  let base = setGroup(bg);
  scoreRowSerial(t, P.hpg, P.dk, P.l, P.d, P.lSel, P.scale, bt + 1u);
  topnSelect(bt, P.nSel, P.forceInit != 0u, P.forceLocal, base, P.slot + bg * P.nSel);
}
