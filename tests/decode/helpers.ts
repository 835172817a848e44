// Shared fixtures for the decoder tests: small dense and NSA model configs with odd sizes, seeded
// float64 parameters, random tokens.
import type { ModelConfig, ModelNsaConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import type { Params64 } from '../../src/reference/model';
import { randn, rng } from '../helpers/compare';
import { denseTestModel, TEST_NSA } from '../helpers/models';

/** dk ≠ dv, vocab and T odd, 2 heads per group. */
export const DENSE: ModelConfig = denseTestModel(13, { initStd: 0.2 });

const NSA_BASE: ModelNsaConfig = { ...TEST_NSA, w: 6 };

/** T = 35 > nSel·lSel, so the selection is sparse for later queries; w < T. */
export function nsaModel(nsa: Partial<ModelNsaConfig> = {}, over: Partial<ModelConfig> = {}): ModelConfig {
  return { ...DENSE, seqLen: 35, attention: 'nsa', nsa: { ...NSA_BASE, ...nsa }, ...over };
}

export const NSA_CASES: Array<[string, ModelConfig]> = [
  ['avg, per-branch K/V, learned gates', nsaModel()],
  ['mlp, shared K/V, gates forced to sel', nsaModel({ phi: 'mlp', sharedKV: true, gates: { kind: 'force', branch: 'sel' } })],
  [
    'no forced blocks, frozen gates, one group, w = 1',
    nsaModel({ forceInit: false, forceLocal: 0, gates: { kind: 'freeze', value: [0.2, 0.5, 0.9] }, w: 1 }, { nKvGroups: 1, seqLen: 30 }),
  ],
];

/** The recall options (docs/nsa-spec.md 3.1): attention-only layers, no positional encoding, the key convolution. */
export const OPTION_CASES: Array<[string, ModelConfig]> = [
  ['NSA per-branch K/V, attention-only, conv 3', nsaModel({}, { ffnHidden: 0, shortConv: 3 })],
  ['NSA shared K/V, no positional encoding, conv 4', nsaModel({ sharedKV: true }, { posEncoding: 'none', shortConv: 4 })],
];

/** Seeded parameters; biases, norm gains and convolution taps get noise too so that no term is trivially 0 or 1. */
export function randomParams(c: ModelConfig, seed: number): Params64 {
  const p: Params64 = new Map([...initParams(paramSpecs(c), seed)].map(([k, v]) => [k, Float64Array.from(v)]));
  const r = rng(seed + 1000);
  for (const s of paramSpecs(c)) {
    if (s.init.kind === 'zeros' || s.init.kind === 'ones' || s.init.kind === 'identityConv') {
      const v = p.get(s.name)!;
      const noise = randn(v.length, r, 0.3);
      for (let i = 0; i < v.length; i++) v[i] += noise[i];
    }
  }
  return p;
}

export function randomTokens(n: number, V: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => Math.floor(r() * V));
}

/** The window and MoBA mechanisms (docs/nsa-spec.md section 15): window wraps (w < T), MoBA sparse (topK·B < T, B ∤ T). */
export const MECHANISM_CASES: Array<[string, ModelConfig]> = [
  ['window w = 5', { ...DENSE, seqLen: 23, attention: 'window', window: { w: 5 } }],
  ['moba B = 4, k = 3 (T = 27)', { ...DENSE, seqLen: 27, attention: 'moba', moba: { blockSize: 4, topK: 3 } }],
];

/**
 * DSA (docs/dsa-spec.md): k < T (sparse for t ≥ k, topK odd), k ≥ T (dense through the sparse path),
 * and the recall options (no positional encoding, the key convolution, attention-only, one group).
 */
export const DSA_CASES: Array<[string, ModelConfig]> = [
  [
    'dsa k 5 < T 23, H_I 3, d_I 4',
    { ...DENSE, seqLen: 23, attention: 'dsa', dsa: { indexHeads: 3, indexDim: 4, topK: 5, warmupSteps: 2, lossWeight: 1 } },
  ],
  [
    'dsa k 16 ≥ T 13, H_I 1, d_I 6',
    { ...DENSE, seqLen: 13, attention: 'dsa', dsa: { indexHeads: 1, indexDim: 6, topK: 16, warmupSteps: 0, lossWeight: 1 } },
  ],
  [
    'dsa k 3, one group, no positional encoding, conv 3, attention-only',
    {
      ...DENSE,
      seqLen: 17,
      nKvGroups: 1,
      posEncoding: 'none',
      shortConv: 3,
      ffnHidden: 0,
      attention: 'dsa',
      dsa: { indexHeads: 2, indexDim: 2, topK: 3, warmupSteps: 0, lossWeight: 0.5 },
    },
  ],
];
