// DSA's per-layer indexer parameters (docs/dsa-spec.md section 6), their export names and the
// training phase of an optimizer step: what the model's parameter list, the exporter and the
// trainer add for `model.attention: 'dsa'`. Stored [in, out] for y = x·W like every projection; the
// export transposes them to nn.Linear's [out, in].
import type { DsaConfig, DsaPhase } from './dsa-config';
import type { ParamSpec } from './params';

export interface IndexerParamNames {
  /** WqI [C, H_I·d_I]. */
  wqI: string;
  /** WkI [C, d_I]. */
  wkI: string;
  /** WwI [C, H_I]. */
  wwI: string;
}

export function indexerParamNames(l: number): IndexerParamNames {
  return { wqI: `l${l}.index_wq`, wkI: `l${l}.index_wk`, wwI: `l${l}.index_ww` };
}

/** The exported (Hugging Face style) name of each, under model.layers.<l>.self_attn.indexer. */
export function indexerExportNames(l: number): IndexerParamNames {
  const p = `model.layers.${l}.self_attn.indexer.`;
  return { wqI: `${p}wq.weight`, wkI: `${p}wk.weight`, wwI: `${p}weights_proj.weight` };
}

/** Layer l's indexer parameters: normal(initStd) matrices with weight decay. */
export function indexerParamSpecs(l: number, C: number, c: DsaConfig, initStd: number): ParamSpec[] {
  const n = indexerParamNames(l);
  const init = { kind: 'normal' as const, std: initStd };
  return [
    { name: n.wqI, shape: [C, c.indexHeads * c.indexDim], decay: true, init },
    { name: n.wkI, shape: [C, c.indexDim], decay: true, init },
    { name: n.wwI, shape: [C, c.indexHeads], decay: true, init },
  ];
}

const INDEXER_PARAM = /^l\d+\.index_w[qkw]$/;

/** Whether a parameter is an indexer's (the only ones the warm-up updates). */
export const isIndexerParam = (name: string): boolean => INDEXER_PARAM.test(name);

/** The phase of optimizer step `step` (0-based): the first warmupSteps steps are the warm-up. */
export function dsaPhaseAt(step: number, c: Pick<DsaConfig, 'warmupSteps'>): DsaPhase {
  if (!(Number.isInteger(step) && step >= 0)) throw new RangeError(`dsaPhaseAt: step must be an integer ≥ 0 (got ${step})`);
  return step < c.warmupSteps ? 'warmup' : 'sparse';
}

/** Whether step `step` updates parameter `name`: the warm-up only the indexers, then everything. */
export function dsaUpdates(name: string, step: number, c: Pick<DsaConfig, 'warmupSteps'>): boolean {
  return dsaPhaseAt(step, c) === 'sparse' || isIndexerParam(name);
}
