// The parameter tensors of one arena as a typed table (llm.c's ParameterTensors). The parameter,
// gradient and both Adam-moment arenas share the layout of src/definitions/params.ts, so each is laid out
// by the same layout function and resolves to the same table shape; callers read tensors by field
// (or walk `all` in paramSpecs order for named export and import), never by name.
import { indexerParamNames, isIndexerParam } from '../definitions/dsa-params';
import type { ModelConfig } from '../definitions/model-config';
import { EMBEDDING, FINAL_NORM, type LayerParamNames, layerParamNames, numel, type ParamSpec, paramSpecs } from '../definitions/params';
import type { BufferSlice, PlaceTensor } from '../gpu/arena';
import type { CmpMlpSlices } from '../kernels/nsa-compress';
import type { IndexerWeightSlices } from './dsa/indexer';

export interface LayerParams {
  attnNorm: BufferSlice;
  wq: BufferSlice;
  /** K/V projection weights [C, G·dk|dv]: one pair (dense, shared KV) or cmp, sel, win; with a short convolution, its taps [G·dk, 1, taps]. */
  kv: Array<{ wk: BufferSlice; wv: BufferSlice; kConv?: BufferSlice }>;
  /** NSA gates: logits = x·wg + bg. */
  gates?: { wg: BufferSlice; bg: BufferSlice };
  /** NSA φ = mlp: the compression MLPs of keys and values. */
  cmpMlp?: { k: CmpMlpSlices; v: CmpMlpSlices };
  /** DSA: the lightning indexer's projections WqI, WkI, WwI. */
  indexer?: IndexerWeightSlices;
  wo: BufferSlice;
  /** The SwiGLU MLP and its norm; absent in attention-only layers (ffnHidden 0). */
  mlp?: { norm: BufferSlice; w1: BufferSlice; w3: BufferSlice; w2: BufferSlice };
}

/** One tensor of the arena with its spec (name, shape, weight decay). */
export interface SpecSlice {
  spec: ParamSpec;
  slice: BufferSlice;
}

export interface ParamTensors {
  /** Token embedding [V, C], tied to the LM head. */
  wte: BufferSlice;
  layers: LayerParams[];
  finalNorm: BufferSlice;
  /** Every tensor in paramSpecs order (arena order): named export and import, per-tensor optimizer, gradient-norm ranges. */
  all: readonly SpecSlice[];
}

/**
 * The one layout of a parameter-shaped arena (parameters, gradients, either Adam moment): every
 * tensor of paramSpecs placed in order, and the typed table over them. The names come from
 * src/definitions/params.ts (layerParamNames), so a misspelt field is a type error.
 */
export function paramLayout(c: ModelConfig): (place: PlaceTensor) => ParamTensors {
  return (place) => {
    // Placed with the weight-decayed tensors first, so that each kind is one contiguous run of the
    // arena (paramRuns: one AdamW dispatch per run); `all` keeps paramSpecs order.
    const specs = paramSpecs(c);
    const placed = new Map<string, BufferSlice>();
    // DSA's indexer tensors sit together after the other decayed ones: the warm-up's AdamW over them
    // alone is then one run per buffer.
    const indexer = (x: ParamSpec) => isIndexerParam(x.name);
    const order = [
      ...specs.filter((x) => x.decay && !indexer(x)),
      ...specs.filter(indexer),
      ...specs.filter((x) => !x.decay && !indexer(x)),
    ];
    for (const spec of order) placed.set(spec.name, place(spec.name, numel(spec.shape)));
    const all = specs.map((spec): SpecSlice => ({ spec, slice: placed.get(spec.name)! }));
    const get = (name: string): BufferSlice => {
      const s = placed.get(name);
      if (!s) throw new Error(`paramLayout: ${name} is not a tensor of paramSpecs`);
      return s;
    };
    const nsa = c.attention === 'nsa' ? c.nsa : undefined;
    const layers = Array.from({ length: c.nLayers }, (_, l): LayerParams => {
      const n = layerParamNames(l);
      const mlp = (m: LayerParamNames['cmpMlp']['k']): CmpMlpSlices => ({
        pos: get(m.pos),
        w1: get(m.w1),
        b1: get(m.b1),
        w2: get(m.w2),
        b2: get(m.b2),
      });
      const p: LayerParams = {
        attnNorm: get(n.attnNorm),
        wq: get(n.wq),
        kv: (!nsa || nsa.sharedKV ? [n] : (['cmp', 'sel', 'win'] as const).map((b) => n.branchKV[b])).map((names) => ({
          wk: get(names.wk),
          wv: get(names.wv),
          ...(placed.has(names.kConv) ? { kConv: get(names.kConv) } : {}),
        })),
        wo: get(n.wo),
      };
      if (placed.has(n.w1)) p.mlp = { norm: get(n.mlpNorm), w1: get(n.w1), w3: get(n.w3), w2: get(n.w2) };
      if (nsa) p.gates = { wg: get(n.wg), bg: get(n.bg) };
      if (nsa?.phi === 'mlp') p.cmpMlp = { k: mlp(n.cmpMlp.k), v: mlp(n.cmpMlp.v) };
      const ix = indexerParamNames(l);
      if (placed.has(ix.wqI)) p.indexer = { wqI: get(ix.wqI), wkI: get(ix.wkI), wwI: get(ix.wwI) };
      return p;
    });
    return { wte: get(EMBEDDING), layers, finalNorm: get(FINAL_NORM), all };
  };
}

/**
 * The tensors of a parameter-shaped arena grouped into runs that are contiguous in one buffer (and,
 * with `byDecay`, share the weight-decay flag), each as one slice from its first tensor's start to
 * its last one's end. With `select`, only the selected tensors: an unselected tensor between two
 * selected ones ends the run (DSA's warm-up AdamW over the indexers alone). Between the tensors of a run lies only the arena's alignment padding, which
 * nothing writes: zero in every table (gradients are cleared whole, and AdamW keeps a zero parameter
 * with zero gradient and moments at zero). So a kernel may treat a run as one flat range: the
 * gradient norm (its squares add 0) and AdamW (its update of 0 is 0). Same runs in every table of
 * one layout.
 */
export function paramRuns(
  table: ParamTensors,
  byDecay: boolean,
  select?: (spec: ParamSpec) => boolean,
): Array<{ slice: BufferSlice; floats: number; decay: boolean }> {
  const buffers = [...new Set(table.all.map((t) => t.slice.buffer))];
  const order = [...table.all].sort(
    (x, y) => buffers.indexOf(x.slice.buffer) - buffers.indexOf(y.slice.buffer) || x.slice.offset - y.slice.offset,
  );
  const runs: Array<{ slice: BufferSlice; floats: number; decay: boolean }> = [];
  let open = false;
  for (const t of order) {
    if (select && !select(t.spec)) {
      open = false;
      continue;
    }
    const last = runs[runs.length - 1];
    const decay = byDecay ? t.spec.decay : false;
    const end = t.slice.offset + 4 * numel(t.spec.shape);
    if (open && last && last.slice.buffer === t.slice.buffer && last.decay === decay) {
      last.slice = { ...last.slice, size: end - last.slice.offset };
      last.floats = last.slice.size / 4;
    } else
      runs.push({
        slice: { buffer: t.slice.buffer, offset: t.slice.offset, size: end - t.slice.offset },
        floats: numel(t.spec.shape),
        decay,
      });
    open = true;
  }
  return runs;
}
