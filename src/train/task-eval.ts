// One evaluation for the CLI and the page: the validation loss, plus for task data (the recall
// task) the accuracy on the answers only, scored on the same validation batches — the figure that
// says whether attention reached the stored pair, against chance = 1 / values.
import type { RunConfig } from './config';
import { recallAnswerPositions } from './data/recall';
import { scoreRecall } from './recall-eval';
import type { Trainer } from './trainer';
import type { EvalMetrics } from './types';

export async function evaluateRun(trainer: Trainer, c: RunConfig): Promise<EvalMetrics> {
  const e = await trainer.evaluate();
  if (c.data.source !== 'recall' || !c.data.recall) return e;
  const batches = trainer.dataset.validationBatches(c.train.evalBatches);
  const score = await scoreRecall(trainer, batches, recallAnswerPositions(c.model.seqLen, c.data.recall.queries));
  return { ...e, accuracy: score.accuracy };
}
