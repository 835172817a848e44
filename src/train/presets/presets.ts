// Named run presets. `tiny` is sized for tests and CI on SwiftShader; `m7c-125m` is the
// configuration the PyTorch predecessor could not train.
import { InvalidConfigError } from '../../definitions/config-issue';
import type { RunConfig, TrainConfig } from '../config';

const baseTrain: TrainConfig = {
  steps: 300,
  batchSize: 8,
  gradAccum: 1,
  lrMax: 3e-3,
  lrMin: 3e-4,
  warmupSteps: 20,
  warmupStartFraction: 0.1,
  weightDecay: 0.1,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  gradClip: 1.0,
  seed: 1,
  evalEvery: 50,
  evalBatches: 4,
  logEvery: 10,
};

const nsaOptions = { sharedKV: false, gates: { kind: 'none' } } as const;

export const PRESETS = {
  tiny: {
    model: {
      vocabSize: 256,
      dim: 64,
      nLayers: 2,
      nHeads: 4,
      nKvGroups: 2,
      dk: 16,
      dv: 16,
      ffnHidden: 128,
      seqLen: 64,
      ropeTheta: 10000,
      normEps: 1e-5,
      attention: 'nsa',
      initStd: 0.02,
      nsa: { l: 8, d: 4, lSel: 8, nSel: 3, w: 16, phi: 'avg', forceInit: true, forceLocal: 1, ...nsaOptions },
    },
    train: { ...baseTrain },
    data: { source: 'brown', tokenizer: 'byte' },
  },
  small: {
    model: {
      vocabSize: 256,
      dim: 256,
      nLayers: 4,
      nHeads: 8,
      nKvGroups: 2,
      dk: 32,
      dv: 32,
      ffnHidden: 704,
      seqLen: 256,
      ropeTheta: 10000,
      normEps: 1e-5,
      attention: 'nsa',
      initStd: 0.02,
      nsa: { l: 16, d: 8, lSel: 32, nSel: 4, w: 64, phi: 'avg', forceInit: true, forceLocal: 2, ...nsaOptions },
    },
    train: { ...baseTrain, steps: 2000, lrMax: 1e-3, lrMin: 1e-4, warmupSteps: 100 },
    data: { source: 'brown', tokenizer: 'byte' },
  },
  'm7c-125m': {
    model: {
      vocabSize: 50257,
      dim: 768,
      nLayers: 12,
      nHeads: 12,
      nKvGroups: 2,
      dk: 64,
      dv: 64,
      ffnHidden: 2048,
      seqLen: 1024,
      ropeTheta: 10000,
      normEps: 1e-5,
      attention: 'nsa',
      initStd: 0.02,
      nsa: { l: 32, d: 16, lSel: 64, nSel: 16, w: 512, phi: 'avg', forceInit: true, forceLocal: 2, ...nsaOptions },
    },
    train: { ...baseTrain, steps: 50000, batchSize: 1, lrMax: 6e-4, lrMin: 6e-5, warmupSteps: 2000, evalEvery: 500 },
    data: { source: 'brown', tokenizer: 'gpt2' },
  },
} satisfies Record<string, RunConfig>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/** A deep copy of a preset, safe to edit. */
export function preset(name: PresetName): RunConfig {
  const p = PRESETS[name] as RunConfig | undefined;
  if (!p)
    throw new InvalidConfigError('unknown preset', [
      { field: 'preset', message: `'${String(name)}' is not a preset (known: ${PRESET_NAMES.join(', ')})` },
    ]);
  return structuredClone(p);
}
