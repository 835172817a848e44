// NSA configuration and its validation (docs/nsa-spec.md "Shapes and config"). Validation runs before
// any GPU work; every issue names the offending field so the UI can point at it.

import { type ConfigIssue, InvalidConfigError } from './config-issue';
import { type AttentionShape, attentionShapeIssues } from './shapes';

export type NsaPhi = 'avg' | 'mlp';

export interface NsaConfig {
  /** Compression block length l. */
  l: number;
  /** Compression stride d (d | l, d | lSel). */
  d: number;
  /** Selection block length l'. */
  lSel: number;
  /** Number of selected blocks n. */
  nSel: number;
  /** Sliding window w. */
  w: number;
  /** Compression function φ. */
  phi: NsaPhi;
  /** Always select block 0. */
  forceInit: boolean;
  /** Always select the forceLocal most recent blocks (the one holding t and those before it). */
  forceLocal: number;
}

/** One sequence's attention dims (the NSA reference works per sequence). */
export type NsaShape = Omit<AttentionShape, 'B'>;

/** Hidden width of the φ = mlp compression MLP for vectors of width D. */
export const cmpMlpHidden = (D: number): number => 2 * D;

/** The paper's settings (Yuan et al. 2025, §4.1). */
export const PAPER_NSA_CONFIG: NsaConfig = {
  l: 32,
  d: 16,
  lSel: 64,
  nSel: 16,
  w: 512,
  phi: 'avg',
  forceInit: true,
  forceLocal: 2,
};

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/**
 * The largest value of each integer field, as python/nsa_playground/config.py's MAX_NSA (a config.json
 * beyond them is refused there, so the page and the CLI refuse it too). They also keep every value a
 * kernel reads in a u32 uniform word and the selection buffers [B, T, G, nSel] sized by real configs:
 * no sequence (model.seqLen ≤ 65,536) has more than 4,096 blocks of 16 or a window past 2^20.
 */
export const MAX_NSA = { l: 1 << 12, d: 1 << 12, lSel: 1 << 12, nSel: 1 << 12, w: 1 << 20, forceLocal: 1 << 12 } as const;

/** Every rule of the spec; an empty list means valid. */
export function validateNsaConfig(c: NsaConfig, shape?: Partial<NsaShape>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const bad = (field: string, message: string) => out.push({ field, message });
  const l = c.l;
  const d = c.d;
  const lSel = c.lSel;
  const inRange = (field: keyof typeof MAX_NSA, min: number): boolean => {
    const v = c[field];
    const ok = isInt(v) && v >= min && v <= MAX_NSA[field];
    if (!ok) bad(`nsa.${field}`, `${field} must be an integer in [${min}, ${MAX_NSA[field]}] (got ${v})`);
    return ok;
  };
  const okL = inRange('l', 1);
  const okD = inRange('d', 1);
  const okLSel = inRange('lSel', 1);
  if (okL && okD && l % d !== 0) bad('nsa.d', `d (${d}) must divide l (${l})`);
  if (okLSel && okD && lSel % d !== 0) bad('nsa.d', `d (${d}) must divide lSel (${lSel})`);
  if (okL && okLSel && l > lSel) bad('nsa.lSel', `lSel (${lSel}) must be ≥ l (${l})`);
  inRange('w', 1);
  if (c.phi !== 'avg' && c.phi !== 'mlp') bad('nsa.phi', `phi must be 'avg' or 'mlp' (got ${String(c.phi)})`);
  if (typeof c.forceInit !== 'boolean') bad('nsa.forceInit', `forceInit must be a boolean (got ${String(c.forceInit)})`);
  const okLocal = inRange('forceLocal', 0);
  if (inRange('nSel', 1) && okLocal) {
    const forced = (c.forceInit === true ? 1 : 0) + c.forceLocal;
    if (c.nSel < forced) bad('nsa.nSel', `nSel (${c.nSel}) must be ≥ forceInit + forceLocal (${forced})`);
  }
  if (shape) out.push(...attentionShapeIssues(shape));
  return out;
}

/** Throws an InvalidConfigError listing every issue (for the references and kernel wrappers). */
export function assertNsaConfig(c: NsaConfig, shape?: Partial<NsaShape>): void {
  const issues = validateNsaConfig(c, shape);
  if (issues.length > 0) throw new InvalidConfigError('invalid NSA config', issues);
}
