// The passkey preset: the tiny model on the passkey task (src/train/data/passkey.ts) with the recall
// preset's NSA configuration (T = 64 in eight selection blocks of 8, w = 8). The depth range puts
// the needle's marker at positions [8, 44]: out of the always-selected block 0, and every answer
// digit lies 59 − p ≥ 15 positions back from its query, beyond what window-only attention carries
// through the two layers (nLayers·(w − 1) = 14), so only attention that reaches further (NSA's
// compressed and selected branches, or dense attention) can copy the key.
import type { RunConfig } from '../config';
import { type PasskeyTask, passkeyVocab } from '../data/passkey';
import { PRESETS } from './presets';
import { TASK_NSA } from './task-nsa';

export const PASSKEY_TASK: PasskeyTask = {
  // A decimal passkey: chance is 10 % per digit, 10^−k per whole key.
  digits: 10,
  keyLength: 4,
  fillers: 8,
  // S = T − 2k − 1 = 55: round(0.15·55) = 8 (block 1's first token), round(0.8·55) = 44.
  minDepth: 0.15,
  maxDepth: 0.8,
};

/** The run config: the vocabulary holds exactly the task's tokens (the tokenizer is unused). */
export const PASSKEY_PRESET: RunConfig = {
  model: { ...PRESETS.tiny.model, vocabSize: passkeyVocab(PASSKEY_TASK).size, attention: 'nsa', nsa: { ...TASK_NSA } },
  // The recall preset's schedule.
  train: { ...PRESETS.tiny.train, steps: 1500, batchSize: 4, evalBatches: 16 },
  data: { source: 'passkey', tokenizer: 'byte', passkey: { ...PASSKEY_TASK } },
};

/** A deep copy of the passkey run config (its task is data.passkey), safe to edit. */
export function passkeyPreset(): RunConfig {
  return structuredClone(PASSKEY_PRESET);
}
