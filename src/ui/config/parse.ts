// Turns untrusted JSON (a URL hash, an imported file) into a RunConfig: every field present with
// the right type, no unknown keys, then the engine's own validation. Errors name the field.
import { type ConfigIssue, InvalidConfigError } from '../../definitions/config-issue';
import { type RunConfig, validateRunConfig } from '../../train/config';
import { ALL_FIELDS, type FieldSpec, OPTIONAL_OBJECTS } from './fields';
import { getPath, isRecord } from './paths';

export type ParseResult = { ok: true; config: RunConfig } | { ok: false; errors: ConfigIssue[] };

const OBJECTS = ['model', 'train', 'data', ...OPTIONAL_OBJECTS];
const BRANCHES = ['cmp', 'sel', 'win'];

const inUnit = (v: unknown): boolean => typeof v === 'number' && v >= 0 && v <= 1;

/** Why a gate ablation is malformed, or null. */
export function gatesProblem(g: unknown): string | null {
  const expected = "must be {kind:'none'}, {kind:'force', branch:'cmp'|'sel'|'win'} or {kind:'freeze', value in [0,1] or three of them}";
  if (!isRecord(g)) return expected;
  const keys = Object.keys(g).sort().join(',');
  if (g.kind === 'none' && keys === 'kind') return null;
  if (g.kind === 'force' && keys === 'branch,kind' && BRANCHES.includes(g.branch as string)) return null;
  if (g.kind === 'freeze' && keys === 'kind,value') {
    const v = g.value;
    if (inUnit(v) || (Array.isArray(v) && v.length === 3 && v.every(inUnit))) return null;
  }
  return expected;
}

function typeProblem(spec: FieldSpec, v: unknown): string | null {
  switch (spec.kind.type) {
    case 'int':
    case 'number':
      return typeof v === 'number' ? null : `must be a number (got ${JSON.stringify(v)})`;
    case 'select':
      return typeof v === 'string' ? null : `must be one of ${spec.kind.options.map((o) => o.value).join(', ')} (got ${JSON.stringify(v)})`;
    case 'checkbox':
      return typeof v === 'boolean' ? null : `must be true or false (got ${JSON.stringify(v)})`;
    case 'gates':
      return gatesProblem(v);
  }
}

/**
 * Shape errors of a would-be RunConfig. `model.nsa`, `model.window`, `model.moba`, `model.dsa`
 * (other attentions), `data.recall` and `data.passkey` (sources other than that task) may be absent; when present every field in them is required. Unknown keys inside model/train/data are errors; extra top-level
 * keys are too unless `allowExtraTopLevel` (the CLI's config.json carries e.g. stepsDone).
 */
export function configShapeErrors(x: unknown, allowExtraTopLevel = false): ConfigIssue[] {
  if (!isRecord(x)) return [{ field: 'config', message: 'must be a JSON object with model, train and data' }];
  const errs: ConfigIssue[] = [];
  for (const path of OBJECTS) {
    const v = getPath(x, path);
    if (OPTIONAL_OBJECTS.includes(path) && v === undefined) continue;
    if (!isRecord(v)) {
      errs.push({ field: path, message: v === undefined ? 'is missing' : 'must be an object' });
      continue;
    }
    const known = new Set(ALL_FIELDS.filter((f) => f.path.startsWith(`${path}.`)).map((f) => f.path.slice(path.length + 1).split('.')[0]));
    for (const k of Object.keys(v)) if (!known.has(k)) errs.push({ field: `${path}.${k}`, message: 'is not a known setting' });
  }
  if (!allowExtraTopLevel) {
    for (const k of Object.keys(x)) if (!['model', 'train', 'data'].includes(k)) errs.push({ field: k, message: 'is not a known setting' });
  }
  if (errs.some((e) => OBJECTS.includes(e.field))) return errs;
  const absent = OPTIONAL_OBJECTS.filter((p) => getPath(x, p) === undefined);
  for (const spec of ALL_FIELDS) {
    if (absent.some((p) => spec.path.startsWith(`${p}.`))) continue;
    const v = getPath(x, spec.path);
    if (v === undefined && spec.absent !== undefined) continue;
    if (v === undefined) errs.push({ field: spec.path, message: 'is missing' });
    else {
      const p = typeProblem(spec, v);
      if (p) errs.push({ field: spec.path, message: p });
    }
  }
  return errs;
}

/** Shape first (so validation never sees a malformed object), then validateRunConfig. */
export function parseRunConfig(x: unknown, allowExtraTopLevel = false): ParseResult {
  const shape = configShapeErrors(x, allowExtraTopLevel);
  if (shape.length) return { ok: false, errors: shape };
  const src = x as Record<string, unknown>;
  const config = structuredClone({ model: src.model, train: src.train, data: src.data }) as RunConfig;
  const errors = validateRunConfig(config);
  return errors.length ? { ok: false, errors } : { ok: true, config };
}

/**
 * The fields missing from an optional object that is present (model.moba = {topK: 3}), named as
 * configShapeErrors names them. Validation reads an attention's options only when the model uses
 * that attention (model.nsa, model.window, model.moba, model.dsa alike), so without this check a
 * partial object of another attention would pass here and be refused by parseRunConfig on the way
 * back from a link or a file.
 */
export function partialObjectErrors(c: unknown): ConfigIssue[] {
  const errs: ConfigIssue[] = [];
  for (const obj of OPTIONAL_OBJECTS) {
    if (!isRecord(getPath(c, obj))) continue;
    for (const spec of ALL_FIELDS)
      if (spec.path.startsWith(`${obj}.`) && spec.absent === undefined && getPath(c, spec.path) === undefined)
        errs.push({ field: spec.path, message: 'is missing' });
  }
  return errs;
}

/** The errors of a config the panel holds (a partial optional object's missing fields first); never throws. */
export function runConfigErrors(c: RunConfig): ConfigIssue[] {
  const partial = partialObjectErrors(c);
  try {
    return [...partial, ...validateRunConfig(c)];
  } catch (e) {
    if (e instanceof InvalidConfigError) return [...partial, ...e.issues];
    return [...partial, { field: 'config', message: e instanceof Error ? e.message : String(e) }];
  }
}

/** For the page's Start button: true when the config passes every check. */
export function isRunConfigValid(c: RunConfig): boolean {
  return runConfigErrors(c).length === 0;
}
