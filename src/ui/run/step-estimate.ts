// A rough time per training step before Run, from the model's size and the adapter kind (the
// watchdog's own first-step estimate: 6 FLOPs per parameter and token at a deliberately low
// FLOP rate), shown beside the config and asked about before a run whose steps would take minutes
// (m7c-125m on a software adapter: ≈ 13 min a step).
import { countParams } from '../../definitions/params';
import type { RunConfig } from '../../train/config';
import { estimateStepMs } from '../heartbeat/watchdog';

/** Steps estimated slower than this ask before the run starts. */
export const CONFIRM_STEP_SECONDS = 60;

/**
 * Seconds per optimizer step, roughly (or at `flopsPerSecond`, this adapter's measured rate, see
 * calibration.ts); null when the config is not valid enough to count.
 */
export function estimatedStepSeconds(config: RunConfig, software: boolean, flopsPerSecond: number | null = null): number | null {
  const { batchSize, gradAccum } = config.train;
  const tokens = batchSize * gradAccum * config.model.seqLen;
  if (!Number.isFinite(tokens) || tokens <= 0) return null;
  let params: number;
  try {
    params = countParams(config.model);
  } catch {
    return null;
  }
  return Number.isFinite(params) && params > 0 ? stepSecondsFor(params, tokens, software, flopsPerSecond) : null;
}

/** Seconds per optimizer step for a model of `params` parameters and `tokensPerStep` tokens (at a measured rate when given). */
export function stepSecondsFor(params: number, tokensPerStep: number, software: boolean, flopsPerSecond: number | null = null): number {
  if (flopsPerSecond !== null && flopsPerSecond > 0) return (6 * params * tokensPerStep) / flopsPerSecond;
  return estimateStepMs(params, tokensPerStep, software) / 1000;
}

/** Two significant figures at most, never in exponent form. */
const short = (x: number): string => (x < 10 ? x.toFixed(1).replace(/\.0$/, '') : String(Math.round(x)));

export function formatDuration(seconds: number): string {
  if (seconds < 1) return `≈ ${short(seconds * 1000)} ms`;
  if (seconds < 120) return `≈ ${short(seconds)} s`;
  if (seconds < 7200) return `≈ ${Math.round(seconds / 60)} min`;
  return `≈ ${(seconds / 3600).toFixed(1)} h`;
}

/** The question asked before a run whose steps are estimated above CONFIRM_STEP_SECONDS; null: no need to ask. */
export function slowRunQuestion(config: RunConfig, software: boolean, flopsPerSecond: number | null = null): string | null {
  const s = estimatedStepSeconds(config, software, flopsPerSecond);
  if (s === null || s <= CONFIRM_STEP_SECONDS) return null;
  return (
    `Each training step of this model is estimated at ${formatDuration(s)} on this ${software ? 'software (CPU) adapter' : 'GPU'}` +
    ` (${config.train.steps} steps: ${formatDuration(s * config.train.steps)}). The page stays usable, and the watchdog waits for slow steps. Start anyway?`
  );
}
