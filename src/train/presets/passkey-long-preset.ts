// The long passkey preset (issue 20: "passkey retuned"): the passkey task (src/train/data/passkey.ts)
// at T = 1,024 on mqar-long's model — two attention-only layers, a causal key convolution of 4 taps,
// RoPE, NSA with blocks of 16, 4 selected and a window of 16, nothing but the query's own block
// forced — so that, as in the MQAR presets, the needle is out of the window's reach and out of NSA's
// forced blocks and NSA must find it by content:
// - window-only attention carries information at most nLayers·(w − 1 + shortConv − 1) = 36 positions
//   back. The needle ends at p + k and the first answer input is T − k, so p ≤ T − 2k − 37 = 979
//   keeps every needle token out of every answer's reach: maxDepth 0.9 puts p ≤ round(0.9·1015) =
//   914 (S = T − 2k − 1 = 1015), at least 102 positions before the first answer.
// - minDepth 0.02 puts p ≥ 20, past block 0 (which mqar-long does not force either).
// The answers are the 4 digits after the query marker (chance 10 % per digit, 10⁻⁴ per whole key);
// answer-only loss, batch 32, mqar-long's schedule shape (peak LR 2e-3, warmup 50, cosine to a tenth).
//
// Expected (an estimate, not measured: this preset was not trained here, where one WebGPU step on
// SwiftShader takes seconds): on an H200, NSA and dense ≥ 95 % of whole keys within the preset's
// 1,500 steps and window-only at chance. A step, alone on an H200: about 28 ms for NSA and 24 ms for
// dense by the tuned figures' dispatch and FLOP rates (1,500 steps in under a minute), 250–500 ms
// at small NSA's tokens/s (the pessimistic bound: 6–12 minutes); docs/gpu.md, "The learn step". The
// device call's learn step trains it (`bash scripts/gpu/device-call.sh --only learn`), stopping at
// 99 % per digit. Held-out evaluation on 8 batches: 256 whole keys.
import type { RunConfig } from '../config';
import { type PasskeyTask, passkeyVocab } from '../data/passkey';
import { mqarPresetConfig } from './mqar-preset';

export const PASSKEY_LONG_TASK: PasskeyTask = {
  digits: 10,
  keyLength: 4,
  fillers: 8,
  minDepth: 0.02,
  maxDepth: 0.9,
};

function passkeyLong(): RunConfig {
  const long = mqarPresetConfig('mqar-long');
  return {
    model: { ...long.model, vocabSize: passkeyVocab(PASSKEY_LONG_TASK).size },
    train: { ...long.train, steps: 1500, batchSize: 32, evalBatches: 8 },
    data: { source: 'passkey', tokenizer: 'byte', passkey: { ...PASSKEY_LONG_TASK } },
  };
}

/** The run config (its task is data.passkey). */
export const PASSKEY_LONG_PRESET: RunConfig = passkeyLong();

/** A deep copy of the long passkey run config, safe to edit. */
export function passkeyLongPreset(): RunConfig {
  return structuredClone(PASSKEY_LONG_PRESET);
}
