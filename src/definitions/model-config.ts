// Model configuration: the schema, its validation (every message names the bad field, and runs
// before any GPU work), and the presets.
import { type ConfigIssue, formatConfigIssues, InvalidConfigError } from './config-issue';
import type { GateAblation } from './gates';
import { type NsaConfig, validateNsaConfig } from './nsa-config';

export type AttentionKind = 'dense' | 'nsa';

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
  /** SwiGLU hidden width. */
  ffnHidden: number;
  seqLen: number;
  ropeTheta: number;
  normEps: number;
  attention: AttentionKind;
  /** NSA options; required when attention === 'nsa'. */
  nsa?: ModelNsaConfig;
  /** Std of the normal initialisation of weight matrices. */
  initStd: number;
}

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
  posInt('ffnHidden', 65536);
  posInt('seqLen', 1 << 16);
  if (isPosInt(c.nHeads) && isPosInt(c.nKvGroups) && c.nHeads % c.nKvGroups !== 0)
    errs.push({ field: 'model.nKvGroups', message: `must divide nHeads (${c.nHeads} heads, ${c.nKvGroups} groups)` });
  if (isPosInt(c.dk) && c.dk % 2 !== 0) errs.push({ field: 'model.dk', message: `must be even for RoPE (got ${c.dk})` });
  if (!(typeof c.ropeTheta === 'number' && c.ropeTheta > 1))
    errs.push({ field: 'model.ropeTheta', message: `must be > 1 (got ${c.ropeTheta})` });
  if (!(typeof c.normEps === 'number' && c.normEps > 0 && c.normEps < 1))
    errs.push({ field: 'model.normEps', message: `must be in (0, 1) (got ${c.normEps})` });
  if (!(typeof c.initStd === 'number' && c.initStd > 0 && c.initStd < 1))
    errs.push({ field: 'model.initStd', message: `must be in (0, 1) (got ${c.initStd})` });
  if (c.attention !== 'dense' && c.attention !== 'nsa')
    errs.push({ field: 'model.attention', message: `must be 'dense' or 'nsa' (got ${String(c.attention)})` });
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
