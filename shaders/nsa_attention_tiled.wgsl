// NSA compressed and window attention, query-tiled: the part the forward and dQ kernels share
// (nsa_attention_tiled_{fwd,dq}.wgsl, after nsa_attention_common.wgsl and
// attention_dense_rows.wgsl).

// The keys of query t.
fn rowKeys(t: u32) -> KeyRange {
  return KeyRange(keyLo(t), keyHi(t));
}

// The keys workgroup wx stages: from its first query's first key to its last query's end (both
// ends ascend with t).
fn stagedKeys(wx: u32) -> KeyRange {
  return KeyRange(keyLo(firstQuery(wx)), keyHi(lastQuery(wx)));
}
