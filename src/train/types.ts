// Events and metrics shared by the trainer, the CLI, the worker bridge and the page.

/** One heartbeat: the same fields in runs/<run>/heartbeat.jsonl and in the page's JSONL download. */
export interface Heartbeat {
  ts: number; // ms since epoch
  iso: string;
  step: number;
  msg: string;
  phase: TrainerPhase;
  loss: number | null;
  toks_per_s: number | null;
  lr: number | null;
  grad_norm: number | null;
  gpu_mem_bytes: number;
}

export type TrainerPhase = 'init' | 'data' | 'step' | 'eval' | 'idle' | 'paused' | 'done' | 'error';

/** Metrics of one optimizer step (read back one step late: they describe step `step`). */
export interface StepMetrics {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
  tokensPerSecond: number;
  /** NSA models: statistics of the step's last micro-batch, averaged (gates) or summed over layers. */
  nsa?: NsaStepStats;
  /** DSA models: the indexer loss Σ over layers of L_I (docs/dsa-spec.md section 5), beside the cross-entropy `loss`. */
  indexLoss?: number;
  /** Wall-clock ms for this step as seen by the host loop. */
  stepMs: number;
  elapsedMs: number;
}

export interface EvalMetrics {
  step: number;
  valLoss: number;
  /** Task runs (recall): the share of answers whose argmax is right, on the validation batches. */
  accuracy?: number;
  /**
   * Task runs: [j] the accuracy of each validation sequence's j-th answer (passkey: digit j of the
   * key), the answers a model has not learned yet. Absent in histories written before 2026-11-28.
   */
  accuracyByAnswer?: number[];
  /**
   * Passkey runs: the validation keys split into ranges of needle position [from, to]
   * (src/train/eval/passkey-depth.ts), each with its keys and the keys right whole. Absent in
   * histories written before this field (2026-11-28).
   */
  keysByDepth?: DepthKeys[];
  /**
   * Task runs of a model with a selection (NSA, MoBA, DSA): the share of the validation answers
   * whose source some layer's selection read (src/train/eval/needle-read.ts). Absent when no answer
   * has a source, and in histories written before this field (2026-11-28).
   */
  needleSelected?: number;
}

/** One range of needle positions [from, to] (inclusive): the validation keys whose needle sits there, and how many were right whole. */
export interface DepthKeys {
  from: number;
  to: number;
  sequences: number;
  keysRight: number;
}

export interface NsaStepStats {
  /** Mean gate value per branch (cmp, sel, win). */
  gateMean: [number, number, number];
  /** How often each block distance bt − j was selected (all layers, groups, positions). */
  histogram: number[];
  /** Selection rows that break the spec's top-n rules: must stay 0. */
  invalid: number;
  /**
   * Key rows per query and KV group, per branch (cmp, sel, win), the mean over the step's last
   * micro-batch and the layers, as the forward kernels counted them (a compressed block is one row).
   * Absent in histories written before the kernels counted (2026-11-27).
   */
  keysPerQuery?: [number, number, number];
  perLayer: Array<{ gateMean: [number, number, number]; invalid: number }>;
}
