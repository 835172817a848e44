// Small model configs with odd sizes (dk ≠ dv, vocab and dims not multiples of 4 or of any tile),
// shared by the whole-model, prefill, snapshot-reader and worker tests: in a full gpu-tier run the
// files build the same shapes, so SwiftShader compiles their pipelines once.
import type { ModelConfig, ModelNsaConfig } from '../../src/definitions/model-config';
import type { OptimizerSettings } from '../../src/definitions/optimizer';

/** Plain gradients for tests that never run the optimizer. */
export const NO_OPTIMIZER: OptimizerSettings = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClip: 0 };

/** Dense: vocab 37, dim 24, 4 heads / 2 groups, dk 6, dv 5, ffn 20. */
export function denseTestModel(seqLen: number, over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    vocabSize: 37,
    dim: 24,
    nLayers: 2,
    nHeads: 4,
    nKvGroups: 2,
    dk: 6,
    dv: 5,
    ffnHidden: 20,
    seqLen,
    ropeTheta: 10000,
    normEps: 1e-5,
    attention: 'dense',
    initStd: 0.3,
    ...over,
  };
}

/** NSA l 4, d 2, lSel 8, nSel 2, w 5, forced init + 1 local block, per-branch K/V, learned gates. */
export const TEST_NSA: ModelNsaConfig = {
  l: 4,
  d: 2,
  lSel: 8,
  nSel: 2,
  w: 5,
  phi: 'avg',
  forceInit: true,
  forceLocal: 1,
  sharedKV: false,
  gates: { kind: 'none' },
};

/** NSA: vocab 29, dim 16, 4 heads / 2 groups, dk 6, dv 5, ffn 12. */
export function nsaTestModel(seqLen: number, over: Partial<ModelConfig> = {}, nsa: Partial<ModelNsaConfig> = {}): ModelConfig {
  return {
    vocabSize: 29,
    dim: 16,
    nLayers: 2,
    nHeads: 4,
    nKvGroups: 2,
    dk: 6,
    dv: 5,
    ffnHidden: 12,
    seqLen,
    ropeTheta: 10000,
    normEps: 1e-5,
    attention: 'nsa',
    initStd: 0.3,
    ...over,
    nsa: { ...TEST_NSA, ...nsa },
  };
}
