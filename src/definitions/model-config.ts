// Model configuration: the schema, its validation (every message names the bad field, and runs
// before any GPU work), and the presets.
import { type ConfigIssue, formatConfigIssues, InvalidConfigError } from './config-issue';
import { type DsaConfig, validateModelDsaConfig } from './dsa-config';
import type { GateAblation } from './gates';
import { type MobaConfig, validateMobaConfig, validateWindowConfig, type WindowConfig } from './mechanisms';
import { type NsaConfig, validateNsaConfig } from './nsa-config';

/** The attention mechanisms (docs/nsa-spec.md: NSA sections 1-14, window and MoBA section 15; DSA docs/dsa-spec.md). */
export type AttentionKind = 'dense' | 'nsa' | 'window' | 'moba' | 'dsa';
export const ATTENTION_KINDS: readonly AttentionKind[] = ['dense', 'nsa', 'window', 'moba', 'dsa'];

/** Positional encoding: RoPE on queries and keys, or none at all (docs/nsa-spec.md 3.1). */
export type PosEncoding = 'rope' | 'none';
export const POS_ENCODINGS: readonly PosEncoding[] = ['rope', 'none'];

/** Widest short convolution (taps) a config may ask for. */
export const MAX_SHORT_CONV = 64;
/** The longest sequence a model config may train or decode (model.seqLen). */
export const MAX_SEQ_LEN = 1 << 16;

/** NSA as used by the model: the spec's config plus the model-level options. */
export interface ModelNsaConfig extends NsaConfig {
  /** One K/V projection shared by the three branches instead of one pair per branch. */
  sharedKV: boolean;
  /** Ablations: force one branch (others' gates 0) or freeze the gates at a value. */
  gates: GateAblation;
}

export interface ModelConfig {
  vocabSize: number;
  dim: number;
  nLayers: number;
  nHeads: number;
  nKvGroups: number;
  /** Query/key head dim. */
  dk: number;
  /** Value head dim. */
  dv: number;
  /** SwiGLU hidden width; 0: attention-only layers (no MLP, no norm before it). */
  ffnHidden: number;
  seqLen: number;
  ropeTheta: number;
  normEps: number;
  attention: AttentionKind;
  /** NSA options; required when attention === 'nsa'. */
  nsa?: ModelNsaConfig;
  /** Sliding-window options; required when attention === 'window'. */
  window?: WindowConfig;
  /** MoBA options; required when attention === 'moba'. */
  moba?: MobaConfig;
  /** DSA options (indexer, top-k, warm-up); required when attention === 'dsa'. */
  dsa?: DsaConfig;
  /** Std of the normal initialisation of weight matrices. */
  initStd: number;
  /** 'rope' (absent: rope) or 'none'. */
  posEncoding?: PosEncoding;
  /** Taps of the causal depthwise convolution on every key projection, before RoPE (absent or 0: none). */
  shortConv?: number;
}

/** The model's positional encoding (absent: RoPE). */
export const usesRope = (c: ModelConfig): boolean => (c.posEncoding ?? 'rope') === 'rope';

/** Taps of the model's key convolution (0: none). */
export const shortConvTaps = (c: ModelConfig): number => c.shortConv ?? 0;

/** Whether the layers have an MLP (ffnHidden > 0). */
export const hasMlp = (c: ModelConfig): boolean => c.ffnHidden > 0;

const isPosInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 1;

/** Every problem of a model config, each naming its field (`model.*`); empty: valid. */
export function validateModelConfig(c: ModelConfig): ConfigIssue[] {
  const errs: ConfigIssue[] = [];
  const posInt = (field: keyof ModelConfig, max?: number) => {
    const v = c[field];
    if (!isPosInt(v)) errs.push({ field: `model.${field}`, message: `must be a positive integer (got ${String(v)})` });
    else if (max !== undefined && v > max) errs.push({ field: `model.${field}`, message: `must be at most ${max} (got ${v})` });
  };
  posInt('vocabSize', 1 << 20);
  posInt('dim', 16384);
  posInt('nLayers', 256);
  posInt('nHeads', 1024);
  posInt('nKvGroups', 1024);
  posInt('dk', 256);
  posInt('dv', 256);
  if (!(typeof c.ffnHidden === 'number' && Number.isInteger(c.ffnHidden) && c.ffnHidden >= 0 && c.ffnHidden <= 65536))
    errs.push({
      field: 'model.ffnHidden',
      message: `must be an integer in [0, 65536] (0: attention-only layers; got ${String(c.ffnHidden)})`,
    });
  if (c.posEncoding !== undefined && !POS_ENCODINGS.includes(c.posEncoding))
    errs.push({
      field: 'model.posEncoding',
      message: `must be ${POS_ENCODINGS.map((p) => `'${p}'`).join(' or ')} (got ${String(c.posEncoding)})`,
    });
  if (
    c.shortConv !== undefined &&
    !(typeof c.shortConv === 'number' && Number.isInteger(c.shortConv) && c.shortConv >= 0 && c.shortConv <= MAX_SHORT_CONV)
  )
    errs.push({ field: 'model.shortConv', message: `must be an integer in [0, ${MAX_SHORT_CONV}] (0: none; got ${String(c.shortConv)})` });
  posInt('seqLen', MAX_SEQ_LEN);
  if (isPosInt(c.nHeads) && isPosInt(c.nKvGroups) && c.nHeads % c.nKvGroups !== 0)
    errs.push({ field: 'model.nKvGroups', message: `must divide nHeads (${c.nHeads} heads, ${c.nKvGroups} groups)` });
  if (isPosInt(c.dk) && c.dk % 2 !== 0) errs.push({ field: 'model.dk', message: `must be even for RoPE (got ${c.dk})` });
  if (!(typeof c.ropeTheta === 'number' && c.ropeTheta > 1))
    errs.push({ field: 'model.ropeTheta', message: `must be > 1 (got ${c.ropeTheta})` });
  if (!(typeof c.normEps === 'number' && c.normEps > 0 && c.normEps < 1))
    errs.push({ field: 'model.normEps', message: `must be in (0, 1) (got ${c.normEps})` });
  if (!(typeof c.initStd === 'number' && c.initStd > 0 && c.initStd < 1))
    errs.push({ field: 'model.initStd', message: `must be in (0, 1) (got ${c.initStd})` });
  if (!ATTENTION_KINDS.includes(c.attention))
    errs.push({
      field: 'model.attention',
      message: `must be one of ${ATTENTION_KINDS.map((k) => `'${k}'`).join(', ')} (got ${String(c.attention)})`,
    });
  if (c.attention === 'window') errs.push(...validateWindowConfig(c.window, c.seqLen));
  if (c.attention === 'moba') errs.push(...validateMobaConfig(c.moba, c.seqLen));
  if (c.attention === 'dsa') errs.push(...validateModelDsaConfig(c.dsa, c));
  if (c.attention === 'nsa') {
    if (!c.nsa) errs.push({ field: 'model.nsa', message: "is required when attention is 'nsa'" });
    else {
      // The shape's own checks (T, H, G, dk, dv) repeat the model fields' checks above under the
      // shape's letters; only the NSA fields' issues are new here.
      for (const e of validateNsaConfig(c.nsa, { T: c.seqLen, H: c.nHeads, G: c.nKvGroups, dk: c.dk, dv: c.dv }))
        if (e.field.startsWith('nsa.')) errs.push({ field: `model.${e.field}`, message: e.message });
      if (typeof c.nsa.sharedKV !== 'boolean') errs.push({ field: 'model.nsa.sharedKV', message: 'must be true or false' });
      const g = c.nsa.gates;
      const okGates =
        g &&
        (g.kind === 'none' ||
          (g.kind === 'force' && ['cmp', 'sel', 'win'].includes(g.branch)) ||
          (g.kind === 'freeze' &&
            (typeof g.value === 'number'
              ? g.value >= 0 && g.value <= 1
              : Array.isArray(g.value) && g.value.length === 3 && g.value.every((v) => v >= 0 && v <= 1))));
      if (!okGates)
        errs.push({
          field: 'model.nsa.gates',
          message: "must be {kind:'none'}, {kind:'force', branch:'cmp'|'sel'|'win'} or {kind:'freeze', value in [0,1]}",
        });
    }
  }
  return errs;
}

/** Throws an InvalidConfigError listing every bad field. */
export function assertValidModelConfig(c: ModelConfig): void {
  const errs = validateModelConfig(c);
  if (errs.length) throw new InvalidConfigError('invalid model config', errs);
}
