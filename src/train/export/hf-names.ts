// Our parameter names (src/definitions/params.ts) ↔ the exported directory's Hugging Face Llama-style
// names, and which tensors change orientation: our matrices are stored [in, out] for y = x·W, an
// nn.Linear weight is [out, in], so every projection is transposed; the embedding, norm gains,
// biases and the compression MLP's position embedding keep their shape.
import { indexerExportNames, indexerParamNames } from '../../definitions/dsa-params';
import type { ModelConfig } from '../../definitions/model-config';
import { EMBEDDING, FINAL_NORM, layerParamNames, type ParamSpec, paramSpecs } from '../../definitions/params';

export interface ExportedTensor {
  /** Our name (src/definitions/params.ts). */
  ours: string;
  /** The exported name (model.safetensors, and exp_avg.<name> / exp_avg_sq.<name> in optimizer.safetensors). */
  hf: string;
  /** Our shape. */
  shape: readonly number[];
  /** The exported shape: [out, in] for a transposed matrix, else ours. */
  hfShape: readonly number[];
  transpose: boolean;
}

/** Every parameter of the model in paramSpecs order, with its exported name and orientation. */
export function exportedTensors(c: ModelConfig): ExportedTensor[] {
  const hfName = new Map<string, { hf: string; transpose: boolean }>([
    [EMBEDDING, { hf: 'model.embed_tokens.weight', transpose: false }],
    [FINAL_NORM, { hf: 'model.norm.weight', transpose: false }],
  ]);
  for (let l = 0; l < c.nLayers; l++) {
    const n = layerParamNames(l);
    const p = `model.layers.${l}.`;
    const linear = (ours: string, hf: string) => hfName.set(ours, { hf: `${p}${hf}.weight`, transpose: true });
    const plain = (ours: string, hf: string) => hfName.set(ours, { hf: `${p}${hf}`, transpose: false });
    plain(n.attnNorm, 'input_layernorm.weight');
    linear(n.wq, 'self_attn.q_proj');
    linear(n.wk, 'self_attn.k_proj');
    linear(n.wv, 'self_attn.v_proj');
    // The key convolution: torch's depthwise Conv1d weight [G·dk, 1, taps], our layout too.
    plain(n.kConv, 'self_attn.k_conv1d.weight');
    for (const b of ['cmp', 'sel', 'win'] as const) {
      linear(n.branchKV[b].wk, `self_attn.k_${b}_proj`);
      linear(n.branchKV[b].wv, `self_attn.v_${b}_proj`);
      plain(n.branchKV[b].kConv, `self_attn.k_${b}_conv1d.weight`);
    }
    linear(n.wg, 'self_attn.branch_gate');
    plain(n.bg, 'self_attn.branch_gate.bias');
    for (const which of ['k', 'v'] as const) {
      const m = n.cmpMlp[which];
      plain(m.pos, `self_attn.compress_${which}.pos_embed`);
      linear(m.w1, `self_attn.compress_${which}.fc1`);
      plain(m.b1, `self_attn.compress_${which}.fc1.bias`);
      linear(m.w2, `self_attn.compress_${which}.fc2`);
      plain(m.b2, `self_attn.compress_${which}.fc2.bias`);
    }
    // DSA's lightning indexer: nn.Linear weights under self_attn.indexer.
    const ours = indexerParamNames(l);
    const hf = indexerExportNames(l);
    for (const k of ['wqI', 'wkI', 'wwI'] as const) hfName.set(ours[k], { hf: hf[k], transpose: true });
    linear(n.wo, 'self_attn.o_proj');
    plain(n.mlpNorm, 'post_attention_layernorm.weight');
    // SwiGLU: silu(x·w1) · (x·w3), then ·w2.
    linear(n.w1, 'mlp.gate_proj');
    linear(n.w3, 'mlp.up_proj');
    linear(n.w2, 'mlp.down_proj');
  }
  return paramSpecs(c).map((s: ParamSpec) => {
    const m = hfName.get(s.name);
    if (!m) throw new Error(`export: parameter '${s.name}' has no exported name`);
    const t = m.transpose && s.shape.length === 2;
    return { ours: s.name, hf: m.hf, shape: s.shape, hfShape: t ? [s.shape[1], s.shape[0]] : s.shape, transpose: t };
  });
}

/** A row-major [rows, cols] matrix transposed to [cols, rows]. */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

/** Our tensor → its exported layout. */
export function toExported(t: ExportedTensor, data: Float32Array): Float32Array {
  return t.transpose ? transpose2d(data, t.shape[0], t.shape[1]) : data;
}

/** An exported tensor → our layout. */
export function fromExported(t: ExportedTensor, data: Float32Array): Float32Array {
  return t.transpose ? transpose2d(data, t.hfShape[0], t.hfShape[1]) : data;
}
