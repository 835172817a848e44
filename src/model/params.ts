// Parameter layout: every tensor's name, shape and optimizer treatment, in arena order. The
// parameter, gradient and both Adam-moment arenas use this same list, so they chunk identically.
import type { ModelConfig } from './config';

export interface ParamSpec {
  name: string;
  shape: number[];
  /** Decoupled weight decay applies (matrices and the embedding, not norm gains). */
  decay: boolean;
  init: { kind: 'normal'; std: number } | { kind: 'ones' } | { kind: 'zeros' };
}

export const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

export interface LayerParamNames {
  attnNorm: string;
  wq: string;
  wk: string;
  wv: string;
  wo: string;
  mlpNorm: string;
  w1: string;
  w3: string;
  w2: string;
}

export function layerParamNames(l: number): LayerParamNames {
  const p = `l${l}.`;
  return {
    attnNorm: `${p}attn_norm`,
    wq: `${p}wq`,
    wk: `${p}wk`,
    wv: `${p}wv`,
    wo: `${p}wo`,
    mlpNorm: `${p}mlp_norm`,
    w1: `${p}w1`,
    w3: `${p}w3`,
    w2: `${p}w2`,
  };
}

export const EMBEDDING = 'wte';
export const FINAL_NORM = 'final_norm';

export function paramSpecs(c: ModelConfig): ParamSpec[] {
  const C = c.dim;
  const normal = { kind: 'normal' as const, std: c.initStd };
  // GPT-2: projections into the residual stream are scaled down by depth.
  const residual = { kind: 'normal' as const, std: c.initStd / Math.sqrt(2 * c.nLayers) };
  const specs: ParamSpec[] = [{ name: EMBEDDING, shape: [c.vocabSize, C], decay: true, init: normal }];
  for (let l = 0; l < c.nLayers; l++) {
    const n = layerParamNames(l);
    specs.push(
      { name: n.attnNorm, shape: [C], decay: false, init: { kind: 'ones' } },
      { name: n.wq, shape: [C, c.nHeads * c.dk], decay: true, init: normal },
      { name: n.wk, shape: [C, c.nKvGroups * c.dk], decay: true, init: normal },
      { name: n.wv, shape: [C, c.nKvGroups * c.dv], decay: true, init: normal },
      { name: n.wo, shape: [c.nHeads * c.dv, C], decay: true, init: residual },
      { name: n.mlpNorm, shape: [C], decay: false, init: { kind: 'ones' } },
      { name: n.w1, shape: [C, c.ffnHidden], decay: true, init: normal },
      { name: n.w3, shape: [C, c.ffnHidden], decay: true, init: normal },
      { name: n.w2, shape: [c.ffnHidden, C], decay: true, init: residual },
    );
  }
  specs.push({ name: FINAL_NORM, shape: [C], decay: false, init: { kind: 'ones' } });
  return specs;
}

export function countParams(c: ModelConfig): number {
  return paramSpecs(c).reduce((a, s) => a + numel(s.shape), 0);
}
