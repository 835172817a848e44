// The `long` preset: multi-query associative recall at T = 4096 with the paper's NSA block sizes
// (l = 32, d = 16, l′ = 64) and a selection and window scaled to the length (n = 8, w = 256), so the
// last query reads 1,023 of 4,096 keys (a quarter) and a query 827 on average against dense
// attention's 2,048 — the regime where NSA's cost stops growing with the context. The answers lie
// beyond what window-only attention can carry (nLayers·(w − 1) positions), so the accuracy chart
// tells whether selection finds the stored pairs. Sized for a consumer GPU: 3.1 M parameters,
// 4 × 4096 tokens and 4.8e11 model FLOPs a step (dense: 6.9e11); see README for the time per step.
import type { RunConfig } from '../config';
import { type RecallTask, recallVocab } from '../data/recall';
import { PRESETS } from './presets';

const T = 4096;
const LAYERS = 4;
const NSA = {
  l: 32,
  d: 16,
  lSel: 64,
  nSel: 8,
  w: 256,
  phi: 'avg',
  forceInit: true,
  forceLocal: 2,
  sharedKV: false,
  gates: { kind: 'none' },
} as const;

export const LONG_TASK: RecallTask = {
  keys: 64,
  values: 64,
  fillers: 1,
  pairs: 64,
  queries: 32,
  // One past window-only attention's reach through every layer.
  minDistance: LAYERS * (NSA.w - 1) + 1,
  // Out of the always-selected block 0.
  minStart: NSA.lSel,
};

export const LONG_PRESET: RunConfig = {
  model: {
    ...PRESETS.small.model,
    nLayers: LAYERS,
    seqLen: T,
    vocabSize: recallVocab(LONG_TASK).size,
    attention: 'nsa',
    nsa: { ...NSA },
  },
  train: { ...PRESETS.small.train, steps: 3000, batchSize: 4, warmupSteps: 100, evalEvery: 100, evalBatches: 8, logEvery: 10 },
  data: { source: 'recall', tokenizer: 'byte', recall: { ...LONG_TASK } },
};

/** A deep copy of the long-context preset, safe to edit. */
export function longPreset(): RunConfig {
  return structuredClone(LONG_PRESET);
}
