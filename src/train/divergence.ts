// The divergence guard: a run whose training loss stays above a multiple of ln V (V = the model's
// vocabulary: a freshly initialised model predicts nearly uniformly, so its loss starts at about
// ln V and a learning run only goes below it) for several consecutive steps is stopped with a
// DivergenceError instead of running on and being saved as a success. The reference is ln V, not
// the run's own first loss, so a resumed run trips exactly where the uninterrupted one would.
// Settings: train.divergenceFactor (0 turns the guard off) and train.divergenceSteps, both
// optional with the defaults below, which a normal run never reaches (its loss stays near or below
// ln V; the `--lr 10 --set train.lrMin=10` run of the tiny preset is above 3 · ln 256 from step 2).
import type { TrainConfig } from './config';

export const DIVERGENCE_DEFAULTS = {
  /** The loss limit is this × ln V. */
  factor: 3,
  /** Consecutive steps above the limit that stop the run. */
  steps: 5,
} as const;

export interface DivergenceSettings {
  /** × ln V; 0: no guard. */
  factor: number;
  steps: number;
  vocabSize: number;
}

/** The guard's settings of a run: its train config's fields, else the defaults. */
export function divergenceSettings(t: TrainConfig, vocabSize: number): DivergenceSettings {
  return {
    factor: t.divergenceFactor ?? DIVERGENCE_DEFAULTS.factor,
    steps: t.divergenceSteps ?? DIVERGENCE_DEFAULTS.steps,
    vocabSize,
  };
}

/** The run's loss stayed above factor × ln V for `steps` consecutive steps (weights finite, but lost). */
export class DivergenceError extends Error {
  override readonly name = 'DivergenceError';
  constructor(
    readonly step: number,
    readonly loss: number,
    readonly limit: number,
    readonly firstStep: number,
    readonly settings: DivergenceSettings,
  ) {
    const { factor, steps, vocabSize } = settings;
    super(
      `step ${step}: loss ${loss.toFixed(4)} has been above ${limit.toFixed(4)} (train.divergenceFactor ${factor} × ln ${vocabSize}) ` +
        `for ${steps} consecutive steps, since step ${firstStep} — the run diverged and was stopped. ` +
        'Lower the learning rate (train.lrMax, train.lrMin) or clip gradients harder (train.gradClip), then start a new run ' +
        '(train.divergenceFactor = 0 turns this guard off; train.divergenceSteps sets the steps).',
    );
  }
}

/** Watches each step's loss, in step order; observe() throws DivergenceError when the guard trips. */
export class DivergenceGuard {
  private readonly limit: number;
  private streak = 0;
  private firstStep = -1;

  constructor(private readonly settings: DivergenceSettings) {
    this.limit = settings.factor * Math.log(settings.vocabSize);
  }

  observe(step: number, loss: number): void {
    if (this.count(step, loss) && this.streak >= this.settings.steps)
      throw new DivergenceError(step, loss, this.limit, this.firstStep, this.settings);
  }

  /**
   * Continues the streak of the earlier steps of a resumed run (its checkpoint's metrics, in order)
   * without throwing, so the resumed run stops where the uninterrupted one would.
   */
  replay(history: ReadonlyArray<{ step: number; loss: number }>): void {
    for (const m of history) this.count(m.step, m.loss);
  }

  /** Adds a step to the streak; true if its loss is above the limit (and the guard is on). */
  private count(step: number, loss: number): boolean {
    if (this.settings.factor === 0) return false;
    if (!(loss > this.limit)) {
      this.streak = 0;
      return false;
    }
    if (this.streak === 0) this.firstStep = step;
    this.streak++;
    return true;
  }
}
