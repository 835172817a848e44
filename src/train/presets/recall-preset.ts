// The associative-recall preset: the tiny model on the recall task (src/train/data/recall.ts),
// with an NSA configuration whose sliding window can never reach the answers. T = 64 split into
// eight selection blocks of 8: block 0 and the query block are forced, so the stored pair must be
// found among the six blocks in between by content (distractor pairs fill the same region).
import type { DataConfig, DataSource, RunConfig } from '../config';
import { type RecallTask, recallVocab } from '../data/recall';
import { PASSKEY_TASK } from './passkey-preset';
import { PRESETS } from './presets';
import { TASK_NSA } from './task-nsa';

const LAYERS = PRESETS.tiny.model.nLayers;

export const RECALL_TASK: RecallTask = {
  keys: 16,
  values: 16,
  // One filler token: random fillers only add unpredictable targets (gradient noise) to the loss,
  // which is taken over every position; the pairs stay at random places among distractors.
  fillers: 1,
  pairs: 10,
  // Eight answers per sequence: more signal per step (SwiftShader steps are expensive).
  queries: 8,
  // Window-only attention carries information at most nLayers·(w − 1) positions back; one more
  // and the answer is out of its reach in every sample, not just out of the last layer's window.
  minDistance: LAYERS * (TASK_NSA.w - 1) + 1,
  // Out of the always-selected block 0: selection has to find the block.
  minStart: TASK_NSA.lSel,
};

/** The run config: the vocabulary holds exactly the task's tokens (the tokenizer is unused). */
export const RECALL_PRESET: RunConfig = {
  model: { ...PRESETS.tiny.model, vocabSize: recallVocab(RECALL_TASK).size, attention: 'nsa', nsa: { ...TASK_NSA } },
  // 1500 steps: measured on SwiftShader, NSA reaches 18 % held-out accuracy (chance 6.25 %) while
  // window-only stays at chance; at 300 steps every mode is still at chance.
  train: { ...PRESETS.tiny.train, steps: 1500, batchSize: 4, evalBatches: 16 },
  data: { source: 'recall', tokenizer: 'byte', recall: { ...RECALL_TASK } },
};

/** A deep copy of the recall run config (its task is data.recall), safe to edit. */
export function recallPreset(): RunConfig {
  return structuredClone(RECALL_PRESET);
}

/**
 * `d` with another source: a task source (recall, passkey) brings its task (the one already there,
 * else RECALL_TASK / PASSKEY_TASK), and every source drops the tasks it does not train (validation
 * rejects a task the run would ignore).
 */
export function withDataSource(d: DataConfig, source: DataSource): DataConfig {
  const { recall, passkey, ...rest } = d;
  if (source === 'recall') return { ...rest, source, recall: recall ?? { ...RECALL_TASK } };
  if (source === 'passkey') return { ...rest, source, passkey: passkey ?? { ...PASSKEY_TASK } };
  return { ...rest, source };
}
