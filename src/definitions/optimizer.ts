// AdamW and gradient-clipping settings, one definition for the train config, the model plan (which
// owns the optimizer state), the AdamW kernel and its float64 twin.

/** AdamW hyperparameters of one optimizer step (the kernel's uniform, the reference's arguments). */
export interface AdamwHyper {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Optimizer step t ≥ 1 (bias corrections use βᵗ). */
  step: number;
}

/** The optimizer settings of a run (train config fields of the same names). */
export interface OptimizerSettings {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Global gradient-norm clip (0 = no clipping). */
  gradClip: number;
}

/** The hyperparameters of optimizer step `step` (≥ 1) at learning rate `lr`. */
export function adamwHyper(opt: OptimizerSettings, lr: number, step: number): AdamwHyper {
  return { lr, beta1: opt.beta1, beta2: opt.beta2, eps: opt.eps, weightDecay: opt.weightDecay, step };
}
