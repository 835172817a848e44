// The associative-recall preset: the tiny model on the recall task (src/train/data/recall.ts),
// with an NSA configuration whose sliding window can never reach the answers. T = 64 split into
// eight selection blocks of 8: block 0 and the query block are forced, so the stored pair must be
// found among the six blocks in between by content (distractor pairs fill the same region).
import type { RunConfig } from '../train/config';
import type { RecallTask } from '../train/data/recall';
import { PRESETS } from './presets';

const NSA = { l: 8, d: 4, lSel: 8, nSel: 3, w: 8, phi: 'avg', forceInit: true, forceLocal: 1, sharedKV: false, gates: { kind: 'none' } } as const;
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
  minDistance: LAYERS * (NSA.w - 1) + 1,
  // Out of the always-selected block 0: selection has to find the block.
  minStart: NSA.lSel,
};

const VOCAB = RECALL_TASK.fillers + RECALL_TASK.keys + RECALL_TASK.values;

/**
 * The run config. data.source is a placeholder ('random' — the run config has no 'recall' source
 * yet): the recall eval builds its dataset from RECALL_TASK, never from data.source.
 */
export const RECALL_PRESET: RunConfig = {
  model: { ...PRESETS.tiny.model, vocabSize: VOCAB, attention: 'nsa', nsa: { ...NSA } },
  train: { ...PRESETS.tiny.train, steps: 300, batchSize: 4, evalBatches: 16 },
  data: { source: 'random', tokenizer: 'byte' },
};

/** A deep copy of the recall run config and task, safe to edit. */
export function recallPreset(): { run: RunConfig; task: RecallTask } {
  return { run: structuredClone(RECALL_PRESET), task: { ...RECALL_TASK } };
}
