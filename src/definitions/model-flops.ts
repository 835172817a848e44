// Model FLOPs of one training step, for model-FLOP utilisation (MFU) in the benchmarks: the
// arithmetic the model needs, not what the kernels happen to execute (recomputation is not
// counted), as in the PaLM paper's appendix B.
import type { ModelConfig } from './model-config';
import { visibleCmpBlocks } from './nsa-blocks';
import { paramSpecs } from './params';

/**
 * Weights applied to every token as a matrix product: every 2-D parameter (the embedding counts
 * once, as the tied output projection) except the compression MLP's, which runs once per
 * compressed block rather than per token (under 1 % of the total in every preset).
 */
export function perTokenMatmulParams(c: ModelConfig): number {
  return paramSpecs(c)
    .filter((s) => s.shape.length === 2 && !s.name.includes('.cmp_mlp_'))
    .reduce((a, s) => a + s.shape[0] * s.shape[1], 0);
}

/**
 * Keys one query at position t attends to, per head. Dense: t + 1. NSA: ncmp(t) compressed keys,
 * at most nSel·lSel selected positions (never more than t + 1) and min(w, t + 1) window keys.
 * Window: min(w, t + 1). MoBA: at most topK·B positions (never more than t + 1), plus the
 * floor((t + 1)/B) block means it scores (docs/nsa-spec.md section 15). DSA (sparse phase): the
 * min(k, t + 1) selected tokens; its indexer's scoring of all t + 1 is indexerForwardFlops.
 */
export function keysPerQuery(c: ModelConfig, t: number): number {
  if (c.attention === 'dsa' && c.dsa) return Math.min(c.dsa.topK, t + 1);
  if (c.attention === 'window' && c.window) return Math.min(c.window.w, t + 1);
  if (c.attention === 'moba' && c.moba) return Math.floor((t + 1) / c.moba.blockSize) + Math.min(c.moba.topK * c.moba.blockSize, t + 1);
  if (c.attention !== 'nsa' || !c.nsa) return t + 1;
  const n = c.nsa;
  return visibleCmpBlocks(t, n) + Math.min(n.nSel * n.lSel, t + 1) + Math.min(n.w, t + 1);
}

/**
 * DSA's lightning indexer, one sequence's forward, all layers (docs/dsa-spec.md section 2): query t
 * scores the t + 1 tokens 0 … t with H_I heads, qI·kI (2·d_I) and the weighted sum (2) per head;
 * 0 for the other mechanisms. Its projections are matmul parameters (perTokenMatmulParams).
 */
export function indexerForwardFlops(c: ModelConfig): number {
  if (c.attention !== 'dsa' || !c.dsa) return 0;
  const T = c.seqLen;
  return ((T * (T + 1)) / 2) * c.dsa.indexHeads * (2 * c.dsa.indexDim + 2) * c.nLayers;
}

/** keysPerQuery summed over the positions 0 … seqLen − 1 of one sequence (per head and layer). */
export function keysPerSequence(c: ModelConfig): number {
  let keys = 0;
  for (let t = 0; t < c.seqLen; t++) keys += keysPerQuery(c, t);
  return keys;
}

/** Model FLOPs of one sequence's forward pass through attention scores and values (DSA: and its indexer's scores), all layers. */
export function attentionForwardFlops(c: ModelConfig): number {
  const keys = keysPerSequence(c);
  // q·k (2·dk) and p·v (2·dv) per key, per head, per layer.
  return keys * c.nHeads * c.nLayers * (2 * c.dk + 2 * c.dv) + indexerForwardFlops(c);
}

/**
 * Model FLOPs of one training step over `sequences` sequences of seqLen tokens: forward + backward
 * = 3 × forward (backward: two products per forward product) for the matrix products (2 per
 * multiply–add) and the attention.
 */
export function trainingFlopsPerStep(c: ModelConfig, sequences: number): number {
  const tokens = sequences * c.seqLen;
  return 3 * (2 * perTokenMatmulParams(c) * tokens + sequences * attentionForwardFlops(c));
}
