// One evaluation for the CLI and the page: the validation loss, plus for task data (the recall and
// passkey tasks) the accuracy on the answers only, scored on the same validation batches — the
// figure that says whether attention reached the stored pair or the needle, against chance =
// 1 / values (recall) or 1 / digits (passkey, per digit).
import type { RunConfig } from '../config';
import type { Trainer } from '../trainer';
import type { EvalMetrics } from '../types';
import { scoreRecall } from './recall-eval';
import { taskAnswersPerSequence } from './task-chance';

export async function evaluateRun(trainer: Trainer, c: RunConfig): Promise<EvalMetrics> {
  const e = await trainer.evaluate();
  if (taskAnswersPerSequence(c) === null) return e;
  const batches = trainer.dataset.validationBatches(c.train.evalBatches);
  const score = await scoreRecall(trainer, batches);
  return { ...e, accuracy: score.accuracy, accuracyByAnswer: score.accuracyByAnswer };
}
