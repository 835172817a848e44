// One evaluation for the CLI and the page: the validation loss, plus for task data (the recall and
// passkey tasks) the accuracy on the answers only, scored on the same validation batches — the
// figure that says whether attention reached the stored pair or the needle, against chance =
// 1 / values (recall) or 1 / digits (passkey, per digit), and for the passkey its keys by needle depth.
import type { RunConfig } from '../config';
import type { Trainer } from '../trainer';
import type { EvalMetrics } from '../types';
import { passkeyDepthScore } from './passkey-depth';
import { scoreRecall } from './recall-eval';
import { taskAnswersPerSequence } from './task-chance';

export async function evaluateRun(trainer: Trainer, c: RunConfig): Promise<EvalMetrics> {
  const e = await trainer.evaluate();
  if (taskAnswersPerSequence(c) === null) return e;
  const batches = trainer.dataset.validationBatches(c.train.evalBatches);
  const score = await scoreRecall(trainer, batches);
  const depth = passkeyDepthScore(c, batches, score.answersRight);
  return {
    ...e,
    accuracy: score.accuracy,
    accuracyByAnswer: score.accuracyByAnswer,
    ...(score.needle?.selectedAny != null && { needleSelected: score.needle.selectedAny }),
    ...(depth && { keysByDepth: depth.map(({ from, to, sequences, keysRight }) => ({ from, to, sequences, keysRight })) }),
  };
}
