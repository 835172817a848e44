// The parameter tensors of one arena as a typed table (llm.c's ParameterTensors). The parameter,
// gradient and both Adam-moment arenas share the layout of src/spec/params.ts, so each resolves to
// the same table shape; the plan reads tensors by field, never by name.
import type { Arena, BufferSlice } from '../gpu/arena';
import type { CmpMlpSlices } from '../kernels/nsa-compress';
import type { ModelConfig } from '../spec/model-config';
import { EMBEDDING, FINAL_NORM, layerParamNames } from '../spec/params';

export interface LayerParams {
  attnNorm: BufferSlice;
  wq: BufferSlice;
  /** K/V projection weights [C, G·dk|dv]: one pair (dense, shared KV) or cmp, sel, win. */
  kv: Array<{ wk: BufferSlice; wv: BufferSlice }>;
  /** NSA gates: logits = x·wg + bg. */
  gates?: { wg: BufferSlice; bg: BufferSlice };
  /** NSA φ = mlp: the compression MLPs of keys and values. */
  cmpMlp?: { k: CmpMlpSlices; v: CmpMlpSlices };
  wo: BufferSlice;
  mlpNorm: BufferSlice;
  w1: BufferSlice;
  w3: BufferSlice;
  w2: BufferSlice;
}

export interface ParamTensors {
  /** Token embedding [V, C], tied to the LM head. */
  wte: BufferSlice;
  layers: LayerParams[];
  finalNorm: BufferSlice;
}

export function paramTable(c: ModelConfig, arena: Arena): ParamTensors {
  const get = (name: string) => arena.get(name);
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const layers = Array.from({ length: c.nLayers }, (_, l): LayerParams => {
    const n = layerParamNames(l);
    const mlp = (m: LayerParamNamesMlp): CmpMlpSlices => ({ pos: get(m.pos), w1: get(m.w1), b1: get(m.b1), w2: get(m.w2), b2: get(m.b2) });
    const p: LayerParams = {
      attnNorm: get(n.attnNorm),
      wq: get(n.wq),
      kv:
        !nsa || nsa.sharedKV
          ? [{ wk: get(n.wk), wv: get(n.wv) }]
          : (['cmp', 'sel', 'win'] as const).map((b) => ({ wk: get(n.branchKV[b].wk), wv: get(n.branchKV[b].wv) })),
      wo: get(n.wo),
      mlpNorm: get(n.mlpNorm),
      w1: get(n.w1),
      w3: get(n.w3),
      w2: get(n.w2),
    };
    if (nsa) p.gates = { wg: get(n.wg), bg: get(n.bg) };
    if (nsa?.phi === 'mlp') p.cmpMlp = { k: mlp(n.cmpMlp.k), v: mlp(n.cmpMlp.v) };
    return p;
  });
  return { wte: get(EMBEDDING), layers, finalNorm: get(FINAL_NORM) };
}

type LayerParamNamesMlp = ReturnType<typeof layerParamNames>['cmpMlp']['k'];
