// Parameter layout: every tensor's name, shape and optimizer treatment, in arena order. The
// parameter, gradient and both Adam-moment arenas use this same list, so they chunk identically.
import { indexerParamSpecs } from './dsa-params';
import { hasMlp, type ModelConfig, shortConvTaps } from './model-config';
import { cmpMlpHidden } from './nsa-config';

export interface ParamSpec {
  name: string;
  shape: number[];
  /** Decoupled weight decay applies (matrices and the embedding, not norm gains). */
  decay: boolean;
  /** identityConv: a [channels, 1, taps] convolution that passes its input through (last tap 1, the others 0). */
  init: { kind: 'normal'; std: number } | { kind: 'ones' } | { kind: 'zeros' } | { kind: 'identityConv'; taps: number };
}

export const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

export interface LayerParamNames {
  attnNorm: string;
  wq: string;
  /** Dense attention, or NSA with sharedKV: the one K/V projection, and its key convolution. */
  wk: string;
  wv: string;
  kConv: string;
  /** NSA: per-branch K/V projections (without sharedKV), and their key convolutions. */
  branchKV: Record<'cmp' | 'sel' | 'win', { wk: string; wv: string; kConv: string }>;
  /** NSA gates: logits = x·wg + bg, column 3i + c. */
  wg: string;
  bg: string;
  /** NSA φ = mlp: compression MLP weights for keys and values. */
  cmpMlp: Record<'k' | 'v', { pos: string; w1: string; b1: string; w2: string; b2: string }>;
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
    kConv: `${p}k_conv`,
    branchKV: {
      cmp: { wk: `${p}wk_cmp`, wv: `${p}wv_cmp`, kConv: `${p}k_conv_cmp` },
      sel: { wk: `${p}wk_sel`, wv: `${p}wv_sel`, kConv: `${p}k_conv_sel` },
      win: { wk: `${p}wk_win`, wv: `${p}wv_win`, kConv: `${p}k_conv_win` },
    },
    wg: `${p}wg`,
    bg: `${p}bg`,
    cmpMlp: {
      k: { pos: `${p}cmp_mlp_k.pos`, w1: `${p}cmp_mlp_k.w1`, b1: `${p}cmp_mlp_k.b1`, w2: `${p}cmp_mlp_k.w2`, b2: `${p}cmp_mlp_k.b2` },
      v: { pos: `${p}cmp_mlp_v.pos`, w1: `${p}cmp_mlp_v.w1`, b1: `${p}cmp_mlp_v.b1`, w2: `${p}cmp_mlp_v.w2`, b2: `${p}cmp_mlp_v.b2` },
    },
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
    const taps = shortConvTaps(c);
    // The key convolution [G·dk, 1, taps] (torch's depthwise Conv1d layout) follows its projection.
    const kv = (names: { wk: string; wv: string; kConv: string }): ParamSpec[] => [
      { name: names.wk, shape: [C, c.nKvGroups * c.dk], decay: true, init: normal },
      { name: names.wv, shape: [C, c.nKvGroups * c.dv], decay: true, init: normal },
      ...(taps > 0
        ? [{ name: names.kConv, shape: [c.nKvGroups * c.dk, 1, taps], decay: false, init: { kind: 'identityConv' as const, taps } }]
        : []),
    ];
    specs.push(
      { name: n.attnNorm, shape: [C], decay: false, init: { kind: 'ones' } },
      { name: n.wq, shape: [C, c.nHeads * c.dk], decay: true, init: normal },
    );
    const nsa = c.attention === 'nsa' ? c.nsa : undefined;
    if (!nsa || nsa.sharedKV) specs.push(...kv(n));
    else for (const b of ['cmp', 'sel', 'win'] as const) specs.push(...kv(n.branchKV[b]));
    // DSA: the layer's lightning indexer (docs/dsa-spec.md section 6).
    if (c.attention === 'dsa' && c.dsa) specs.push(...indexerParamSpecs(l, C, c.dsa, c.initStd));
    if (nsa) {
      specs.push(
        { name: n.wg, shape: [C, 3 * c.nHeads], decay: true, init: normal },
        { name: n.bg, shape: [3 * c.nHeads], decay: false, init: { kind: 'zeros' } },
      );
      if (nsa.phi === 'mlp') {
        for (const [which, D] of [
          ['k', c.dk],
          ['v', c.dv],
        ] as const) {
          const m = n.cmpMlp[which];
          const Dh = cmpMlpHidden(D);
          const l = nsa.l;
          specs.push(
            { name: m.pos, shape: [l, D], decay: false, init: { kind: 'normal', std: c.initStd } },
            { name: m.w1, shape: [l * D, Dh], decay: true, init: { kind: 'normal', std: 1 / Math.sqrt(l * D) } },
            { name: m.b1, shape: [Dh], decay: false, init: { kind: 'zeros' } },
            { name: m.w2, shape: [Dh, D], decay: true, init: { kind: 'normal', std: 1 / Math.sqrt(Dh) } },
            { name: m.b2, shape: [D], decay: false, init: { kind: 'zeros' } },
          );
        }
      }
    }
    specs.push({ name: n.wo, shape: [c.nHeads * c.dv, C], decay: true, init: residual });
    if (hasMlp(c))
      specs.push(
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
