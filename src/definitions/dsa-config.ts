// DSA (DeepSeek Sparse Attention) configuration, its validation and the integer rules the twin,
// the kernels and the decoder share (docs/dsa-spec.md). Validation runs before any GPU work; every
// issue names its field (`dsa.topK`, …; in a model config `model.dsa.…`).

import { type ConfigIssue, InvalidConfigError } from './config-issue';
import type { NsaConfig } from './nsa-config';
import { type AttentionShape, attentionShapeIssues } from './shapes';

export interface DsaConfig {
  /** Indexer heads H_I. */
  indexHeads: number;
  /** Indexer head width d_I (even, ≤ dk). */
  indexDim: number;
  /** Tokens selected per query, k. */
  topK: number;
  /** Optimizer steps of the dense warm-up in which only the indexer learns. */
  warmupSteps: number;
  /** λ: the weight of the indexer's KL loss (it reaches only the indexer's parameters). */
  lossWeight: number;
}

/** One sequence's attention dims (the twin works per sequence). */
export type DsaShape = Omit<AttentionShape, 'B'>;

/** DeepSeek-V3.2's indexer: 64 heads of 128, top-2048, 1000 warm-up steps. */
export const PAPER_DSA_CONFIG: DsaConfig = { indexHeads: 64, indexDim: 128, topK: 2048, warmupSteps: 1000, lossWeight: 1 };

/** c = 1 / sqrt(H_I · d_I): I[t, s] = c · Σ_j w[t, j] · ReLU(qI[t, j] · kI[s]). */
export const indexScale = (c: Pick<DsaConfig, 'indexHeads' | 'indexDim'>): number => 1 / Math.sqrt(c.indexHeads * c.indexDim);

/** Tokens query t selects: min(k, t + 1). */
export const selectedTokenCount = (t: number, topK: number): number => Math.min(topK, t + 1);

/** Main K/V rows read per group for token t (docs/dsa-spec.md section 7). */
export const dsaKeysRead = (t: number, topK: number): number => selectedTokenCount(t, topK);

/** Indexer key rows (width d_I, once per layer) read for token t. */
export const dsaIndexKeysRead = (t: number): number => t + 1;

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** Every rule of docs/dsa-spec.md section 8; an empty list means valid. */
export function validateDsaConfig(c: DsaConfig, shape?: Partial<DsaShape>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const bad = (field: string, message: string) => out.push({ field, message });
  if (!isInt(c.topK) || c.topK < 1) bad('dsa.topK', `topK must be an integer ≥ 1 (got ${c.topK})`);
  if (!isInt(c.indexHeads) || c.indexHeads < 1) bad('dsa.indexHeads', `indexHeads must be an integer ≥ 1 (got ${c.indexHeads})`);
  const okDim = isInt(c.indexDim) && c.indexDim >= 1;
  if (!okDim) bad('dsa.indexDim', `indexDim must be an integer ≥ 1 (got ${c.indexDim})`);
  else if (c.indexDim % 2 !== 0) bad('dsa.indexDim', `indexDim (${c.indexDim}) must be even (RoPE rotates pairs)`);
  if (!isInt(c.warmupSteps) || c.warmupSteps < 0) bad('dsa.warmupSteps', `warmupSteps must be an integer ≥ 0 (got ${c.warmupSteps})`);
  if (typeof c.lossWeight !== 'number' || !Number.isFinite(c.lossWeight) || c.lossWeight <= 0) {
    bad('dsa.lossWeight', `lossWeight must be a finite number > 0 (got ${String(c.lossWeight)})`);
  }
  if (shape) {
    out.push(...attentionShapeIssues(shape));
    const { dk } = shape;
    if (okDim && isInt(dk) && dk >= 1 && c.indexDim > dk) {
      bad('dsa.indexDim', `indexDim (${c.indexDim}) must be ≤ dk (${dk}): the indexer may be no wider than a head`);
    }
  }
  return out;
}

/** Throws an InvalidConfigError listing every issue (for the twin and the kernel wrappers). */
export function assertDsaConfig(c: DsaConfig, shape?: Partial<DsaShape>): void {
  const issues = validateDsaConfig(c, shape);
  if (issues.length > 0) throw new InvalidConfigError('invalid DSA config', issues);
}

/** Training phase of the indexer loss: the dense warm-up (U(t) = [0, t]) or sparse (U(t) = S(t)). */
export type DsaPhase = 'warmup' | 'sparse';

/** Slots per query row of the indexer loss gradient: T in the warm-up, k in the sparse phase. */
export const dsaSlotWidth = (phase: DsaPhase, T: number, topK: number): number => (phase === 'warmup' ? T : topK);

/**
 * The token selection seen as an NSA selection of one-token blocks (lSel = 1, nSel = k, nothing
 * forced), so the NSA selected-branch kernels and their reverse index run on sel [B, T, G, k].
 */
export function tokenSelectionAsNsa(topK: number): NsaConfig {
  return { l: 1, d: 1, lSel: 1, nSel: topK, w: 1, phi: 'avg', forceInit: false, forceLocal: 0 };
}

/**
 * `model.dsa` of a model config whose attention is 'dsa': every issue named `model.dsa.…` (shape
 * rules against the model's head dims), or one for a missing block.
 */
export function validateModelDsaConfig(
  c: DsaConfig | undefined,
  model: { nHeads: number; nKvGroups: number; dk: number; dv: number },
): ConfigIssue[] {
  if (!c || typeof c !== 'object') {
    return [
      {
        field: 'model.dsa',
        message: "is required when attention is 'dsa' (e.g. {indexHeads: 4, indexDim: 16, topK: 32, warmupSteps: 100, lossWeight: 1})",
      },
    ];
  }
  return validateDsaConfig(c, { H: model.nHeads, G: model.nKvGroups, dk: model.dk, dv: model.dv })
    .filter((i) => i.field.startsWith('dsa.'))
    .map((i) => ({ field: `model.${i.field}`, message: i.message }));
}
