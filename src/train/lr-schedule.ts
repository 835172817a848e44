// Learning-rate schedule: linear warmup from a nonzero start, cosine decay, then constant.

export interface LrSchedule {
  lrMax: number;
  lrMin: number;
  warmupSteps: number;
  totalSteps: number;
  /** Warmup starts at lrMax * warmupStartFraction; > 0 so that step 0 still updates the weights. */
  warmupStartFraction: number;
}

/**
 * LR of 0-based optimizer step `step`: linear from lrMax*warmupStartFraction (step 0) to lrMax
 * (step warmupSteps), cosine from lrMax to lrMin (step totalSteps), lrMin after.
 */
export function learningRate(s: LrSchedule, step: number): number {
  if (step < s.warmupSteps) {
    const f = s.warmupStartFraction;
    return s.lrMax * (f + ((1 - f) * step) / s.warmupSteps);
  }
  if (step >= s.totalSteps) return s.lrMin;
  const progress = (step - s.warmupSteps) / (s.totalSteps - s.warmupSteps);
  return s.lrMin + 0.5 * (s.lrMax - s.lrMin) * (1 + Math.cos(Math.PI * progress));
}

/** Problems with a schedule, each message naming the field; empty when valid. */
export function validateLrSchedule(s: LrSchedule): string[] {
  const errors: string[] = [];
  const finite = (field: keyof LrSchedule) => {
    const ok = typeof s[field] === 'number' && Number.isFinite(s[field]);
    if (!ok) errors.push(`${field} must be a finite number, got ${String(s[field])}`);
    return ok;
  };
  const stepCount = (field: 'warmupSteps' | 'totalSteps', min: number) => {
    if (finite(field) && (!Number.isInteger(s[field]) || s[field] < min)) {
      errors.push(`${field} must be an integer ≥ ${min}, got ${s[field]}`);
    }
  };
  if (finite('lrMax') && s.lrMax <= 0) errors.push(`lrMax must be > 0, got ${s.lrMax}`);
  if (finite('lrMin') && s.lrMin < 0) errors.push(`lrMin must be ≥ 0, got ${s.lrMin}`);
  if (Number.isFinite(s.lrMin) && Number.isFinite(s.lrMax) && s.lrMin > s.lrMax) {
    errors.push(`lrMin (${s.lrMin}) must not exceed lrMax (${s.lrMax})`);
  }
  stepCount('warmupSteps', 0);
  stepCount('totalSteps', 1);
  if (Number.isInteger(s.warmupSteps) && Number.isInteger(s.totalSteps) && s.warmupSteps >= s.totalSteps) {
    errors.push(`warmupSteps (${s.warmupSteps}) must be less than totalSteps (${s.totalSteps})`);
  }
  if (finite('warmupStartFraction') && !(s.warmupStartFraction > 0 && s.warmupStartFraction <= 1)) {
    errors.push(`warmupStartFraction must be in (0, 1], got ${s.warmupStartFraction}`);
  }
  return errors;
}
