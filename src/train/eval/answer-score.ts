// Answer-only scoring of a task (recall, passkey) from the model's next-token probabilities, pure
// and browser-safe: the GPU scorer (scoreRecall) reads the probabilities and tallies them here, and
// tests tally hand-made ones.
//
// An answer is right when its target is the row's strict argmax (a tie counts as wrong). Per
// sequence, the answers are all right or not: for the passkey task that is the whole key.

import { IGNORE_TARGET } from '../../definitions/targets';

export interface AnswerScore {
  answers: number;
  correct: number;
  /** correct / answers: per answer token (chance 1/values for recall, 1/digits for passkey). */
  accuracy: number;
  /** Mean p(target) at the answer positions. */
  meanPCorrect: number;
  /** Mean cross-entropy (nats) at the answer positions. */
  answerLoss: number;
  sequences: number;
  /** Sequences whose every answer is right (the whole passkey). */
  sequencesCorrect: number;
  /** sequencesCorrect / sequences (chance for a k-digit passkey: digits^−k). */
  sequenceAccuracy: number;
  /** [j]: the accuracy of each sequence's j-th answer (passkey: digit j of the key), which shows which answers a model has not learned. */
  accuracyByAnswer: number[];
  /** Per sequence in the order scored, one character per answer: '1' right, '0' wrong (the passkey's
   * accuracy by needle depth is tallied from these: src/train/eval/passkey-depth.ts). */
  answersRight: string[];
}

/** The inputs of row r whose targets are scored (not IGNORE_TARGET). */
function scoredInputs(targets: ArrayLike<number>, r: number, T: number): number[] {
  const out: number[] = [];
  for (let t = 0; t < T; t++) if (targets[r * T + t] !== IGNORE_TARGET) out.push(t);
  return out;
}

/** Running sums over batches; `score` turns them into an AnswerScore. */
export class AnswerTally {
  private answers = 0;
  private correct = 0;
  private pSum = 0;
  private lossSum = 0;
  private sequences = 0;
  private sequencesCorrect = 0;
  /** [j]: right answers, and answers, among each sequence's j-th answer. */
  private byAnswerRight: number[] = [];
  private byAnswerCount: number[] = [];
  private answersRight: string[] = [];

  /**
   * Adds one batch: `probs` holds B·T rows of V probabilities (row r·T + t follows input t of
   * sequence r), `targets` the B·T targets; `answerPositions` are the scored inputs (the same in
   * every sequence), or, when absent, each row's inputs whose target is not IGNORE_TARGET (a task
   * dataset ignores every other target, and its answers may move from sequence to sequence).
   * Returns [B·T]: 1 at each answer that was right.
   */
  add(
    probs: ArrayLike<number>,
    targets: ArrayLike<number>,
    shape: { B: number; T: number; V: number },
    answerPositions?: readonly number[],
  ): Uint8Array {
    const { B, T, V } = shape;
    if (probs.length !== B * T * V) throw new Error(`scoreAnswers: ${probs.length} probabilities, expected B·T·V = ${B * T * V}`);
    if (targets.length !== B * T) throw new Error(`scoreAnswers: ${targets.length} targets, expected B·T = ${B * T}`);
    const right = new Uint8Array(B * T);
    for (let r = 0; r < B; r++) {
      let all = true;
      let marks = '';
      const positions = answerPositions ?? scoredInputs(targets, r, T);
      if (positions.length === 0) throw new Error(`scoreAnswers: sequence ${r} has no scored target`);
      for (const [j, t] of positions.entries()) {
        if (!(Number.isInteger(t) && t >= 0 && t < T)) throw new Error(`scoreAnswers: answer position ${t} outside [0, ${T})`);
        const n = r * T + t;
        const target = targets[n];
        if (!(Number.isInteger(target) && target >= 0 && target < V))
          throw new Error(`scoreAnswers: row ${n} has target ${target}, not an answer`);
        const base = n * V;
        const p = probs[base + target];
        let best = true;
        for (let v = 0; v < V && best; v++) if (v !== target && probs[base + v] >= p) best = false;
        this.answers++;
        this.byAnswerRight[j] = (this.byAnswerRight[j] ?? 0) + (best ? 1 : 0);
        this.byAnswerCount[j] = (this.byAnswerCount[j] ?? 0) + 1;
        marks += best ? '1' : '0';
        right[n] = best ? 1 : 0;
        if (best) this.correct++;
        else all = false;
        this.pSum += p;
        this.lossSum += -Math.log(p);
      }
      this.sequences++;
      this.answersRight.push(marks);
      if (all) this.sequencesCorrect++;
    }
    return right;
  }

  score(): AnswerScore {
    const { answers, correct, sequences, sequencesCorrect } = this;
    return {
      answers,
      correct,
      accuracy: correct / answers,
      meanPCorrect: this.pSum / answers,
      answerLoss: this.lossSum / answers,
      sequences,
      sequencesCorrect,
      sequenceAccuracy: sequencesCorrect / sequences,
      accuracyByAnswer: this.byAnswerCount.map((n, j) => this.byAnswerRight[j] / n),
      answersRight: [...this.answersRight],
    };
  }
}

/** Scores one or more batches of probabilities at once (see AnswerTally.add). */
export function scoreAnswers(
  batches: ReadonlyArray<{ probs: ArrayLike<number>; targets: ArrayLike<number> }>,
  shape: { B: number; T: number; V: number },
  answerPositions?: readonly number[],
): AnswerScore {
  const tally = new AnswerTally();
  for (const b of batches) tally.add(b.probs, b.targets, shape, answerPositions);
  return tally.score();
}
