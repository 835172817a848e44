// The training checkpoint: one safetensors file (the same for the CLI and the page) holding the
// parameters and both Adam moments as F32 tensors `param.<name>`, `adam_m.<name>`, `adam_v.<name>`
// (paramSpecs order), the metric history as F64 columns (`metrics.<field>`, `evals.<field>`: see
// history.ts), and as string metadata the run config, the trainer state, why and when it was
// written, and the XXH32 digest of every tensor and metadata value. The header holds state, not
// history, so its size does not grow with the run. Version 1 files (history as JSON in the header,
// no digests) still load. Parameters and moments are never written or read holding NaN/±Infinity.
// Browser-safe (no Node APIs).
import { formatConfigIssues } from '../../definitions/config-issue';
import { numel, paramSpecs } from '../../definitions/params';
import { type RunConfig, validateRunConfig } from '../config';
import type { EvalMetrics, StepMetrics } from '../types';
import { decodeHistory, encodeHistory, HISTORY_PREFIXES, STEP_FIELDS } from './history';
import { CheckpointFormatError, decodeSafetensors, encodeSafetensors, type NamedTensor, safetensorsBytes } from './safetensors';

export { CheckpointFormatError, NonFiniteTensorError } from './safetensors';

export const CHECKPOINT_FORMAT = 'nsa-playground-checkpoint';
/** Version written: 2 (history as tensors, digests). Version 1 (history in the header) is read too. */
export const CHECKPOINT_VERSION = 2;
/** Default cap on a checkpoint file read (2 GiB). */
export const MAX_CHECKPOINT_BYTES = 2 * 1024 ** 3;

/** Where training resumes: the LR position is stepsDone; datasets are seeded and jumpable, so a resumed run seeks to train batch batchesDrawn. */
export interface TrainerState {
  stepsDone: number;
  batchesDrawn: number;
}

export interface TrainingCheckpoint {
  config: RunConfig;
  state: TrainerState;
  /** Keyed by src/definitions/params.ts names. */
  params: Map<string, Float32Array>;
  adamM: Map<string, Float32Array>;
  adamV: Map<string, Float32Array>;
  /** Every step so far. */
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  /** Why it was written: 'interval' | 'signal' | 'non-finite' | 'final' | 'page' (free string, shown to users). */
  reason: string;
  /** ISO date. */
  savedAt: string;
}

/** Everything but the tensors: enough to know the file's exact size before reading them back from the GPU. */
export type CheckpointHeaderFields = Omit<TrainingCheckpoint, 'params' | 'adamM' | 'adamV'>;

const GROUPS = [
  { prefix: 'param', key: 'params' },
  { prefix: 'adam_m', key: 'adamM' },
  { prefix: 'adam_v', key: 'adamV' },
] as const;

// Version 1's JSON history has no NaN/±Infinity (stringify writes null): it carried them as these strings.
const NON_FINITE = new Map<string, number>([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
]);
const reviver = (_k: string, v: unknown): unknown => (typeof v === 'string' && NON_FINITE.has(v) ? NON_FINITE.get(v) : v);

function metadataOf(c: CheckpointHeaderFields): Record<string, string> {
  return {
    format: CHECKPOINT_FORMAT,
    version: String(CHECKPOINT_VERSION),
    config: JSON.stringify(c.config),
    state: JSON.stringify({ stepsDone: c.state.stepsDone, batchesDrawn: c.state.batchesDrawn }),
    reason: c.reason,
    saved_at: c.savedAt,
  };
}

/** History columns may hold NaN/±Infinity (a non-finite loss is a fact of the run); nothing else may. */
const isHistory = (name: string): boolean => HISTORY_PREFIXES.some((p) => name.startsWith(p));

function tensorShapes(config: RunConfig): Array<{ name: string; shape: number[] }> {
  const specs = paramSpecs(config.model);
  return GROUPS.flatMap((g) => specs.map((s) => ({ name: `${g.prefix}.${s.name}`, shape: s.shape })));
}

/** Bytes of the tensor data alone (parameters and both moments, F32): the part fixed by the model. */
export function checkpointTensorBytes(config: RunConfig): number {
  return 3 * 4 * paramSpecs(config.model).reduce((a, s) => a + numel(s.shape), 0);
}

/**
 * The exact size of the file encodeCheckpoint writes for these fields (the history columns grow with
 * the metrics, so the size depends on them, not on the config alone); check quotas and caps with it
 * before writing.
 */
export function checkpointBytesFor(c: CheckpointHeaderFields): number {
  return safetensorsBytes([...tensorShapes(c.config), ...encodeHistory(c.metrics, c.evals)], metadataOf(c));
}

/**
 * Encodes a checkpoint; throws if a tensor of paramSpecs(config.model) is missing, extra or of the
 * wrong size, and (NonFiniteTensorError naming `o.file`, the tensor and the first bad index) if a
 * parameter or moment holds NaN/±Infinity: such a state is never written.
 */
export function encodeCheckpoint(c: TrainingCheckpoint, o: { file?: string } = {}): Uint8Array {
  const specs = paramSpecs(c.config.model);
  const tensors: NamedTensor[] = [];
  for (const g of GROUPS) {
    const map = c[g.key];
    for (const s of specs) {
      const data = map.get(s.name);
      if (!data) throw new Error(`encodeCheckpoint: ${g.key} has no tensor '${s.name}'`);
      tensors.push({ name: `${g.prefix}.${s.name}`, shape: s.shape, data });
    }
    if (map.size !== specs.length) {
      const known = new Set(specs.map((s) => s.name));
      const extra = [...map.keys()].filter((k) => !known.has(k));
      throw new Error(`encodeCheckpoint: ${g.key} has tensors the model does not: ${extra.join(', ')}`);
    }
  }
  tensors.push(...encodeHistory(c.metrics, c.evals));
  return encodeSafetensors(tensors, metadataOf(c), { file: o.file ?? 'checkpoint (being written)' });
}

/**
 * Decodes and validates a checkpoint (version 2, or 1 written by older builds); throws
 * CheckpointFormatError naming `o.file` and the field or tensor at fault: a digest that does not
 * match (a flipped bit), NaN/±Infinity in a parameter or moment (NonFiniteTensorError, with the
 * first bad index), a missing or extra tensor, a bad config, state or history column.
 */
export function decodeCheckpoint(bytes: Uint8Array, o: { file: string; maxBytes?: number }): TrainingCheckpoint {
  const fail = (field: string, detail: string): never => {
    throw new CheckpointFormatError(o.file, field, detail);
  };
  const { metadata, tensors, f64, digested } = decodeSafetensors(bytes, {
    file: o.file,
    maxBytes: o.maxBytes ?? MAX_CHECKPOINT_BYTES,
    allowF64: true,
    nonFiniteAllowed: isHistory,
  });
  const meta = (key: string): string => metadata[key] ?? fail(key, 'missing from the metadata');
  const json = (key: string): unknown => {
    try {
      return JSON.parse(meta(key), reviver);
    } catch (e) {
      if (e instanceof CheckpointFormatError) throw e;
      return fail(key, `is not valid JSON (${(e as Error).message})`);
    }
  };

  const format = meta('format');
  if (format !== CHECKPOINT_FORMAT) fail('format', `is '${format}', not '${CHECKPOINT_FORMAT}'`);
  const versionText = meta('version');
  const version = /^[0-9]+$/.test(versionText) ? Number(versionText) : NaN;
  if (version > CHECKPOINT_VERSION)
    fail('version', `is ${version}, written by a newer build; this build reads versions 1 and ${CHECKPOINT_VERSION}`);
  if (version !== 1 && version !== 2)
    fail('version', `'${versionText}' is not a known version (this build reads versions 1 and ${CHECKPOINT_VERSION})`);
  if (version === 2 && !digested)
    fail('__metadata__.xxh32', 'missing: a version-2 checkpoint carries the digest of every tensor and metadata value');
  for (const name of f64.keys())
    if (!isHistory(name) || version === 1) fail(name, 'dtype F64 is only for the metric history (metrics.*, evals.*)');

  const config = parseConfig(json('config'), fail);
  const state = parseState(json('state'), config, fail);
  checkTensors(tensors, config, fail);
  const group = (prefix: string) => new Map(paramSpecs(config.model).map((s) => [s.name, tensors.get(`${prefix}.${s.name}`)!.data]));
  const history =
    version === 1
      ? {
          metrics: checkNsaRows(parseRows(json('metrics'), 'metrics', STEP_FIELDS, fail), fail) as unknown as StepMetrics[],
          evals: parseRows(json('evals'), 'evals', ['valLoss'], fail) as unknown as EvalMetrics[],
        }
      : decodeHistory(f64, fail);
  return {
    config,
    state,
    params: group('param'),
    adamM: group('adam_m'),
    adamV: group('adam_v'),
    metrics: history.metrics,
    evals: history.evals,
    reason: meta('reason'),
    savedAt: meta('saved_at'),
  };
}

type Fail = (field: string, detail: string) => never;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function parseConfig(raw: unknown, fail: Fail): RunConfig {
  if (!isObject(raw)) return fail('config', 'is not a JSON object');
  for (const k of ['model', 'train', 'data'] as const) if (!isObject(raw[k])) fail(`config.${k}`, 'is missing or not an object');
  const config = raw as unknown as RunConfig;
  let issues;
  try {
    issues = validateRunConfig(config);
  } catch (e) {
    // A structurally odd config (e.g. a nested field of the wrong type) can trip a validator.
    return fail('config', `cannot be validated (${(e as Error).message})`);
  }
  if (issues.length) fail(`config.${issues[0].field}`, `invalid run config:\n${formatConfigIssues(issues)}`);
  return config;
}

function parseState(raw: unknown, config: RunConfig, fail: Fail): TrainerState {
  if (!isObject(raw)) return fail('state', 'is not a JSON object');
  for (const k of ['stepsDone', 'batchesDrawn'] as const) {
    const v = raw[k];
    if (!(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0))
      fail(`state.${k}`, `must be a non-negative integer (got ${String(v)})`);
  }
  const state = { stepsDone: raw.stepsDone as number, batchesDrawn: raw.batchesDrawn as number };
  if (state.stepsDone > config.train.steps)
    fail('state.stepsDone', `is ${state.stepsDone}, beyond config.train.steps (${config.train.steps})`);
  return state;
}

function checkTensors(tensors: Map<string, { shape: number[] }>, config: RunConfig, fail: Fail): void {
  const expected = tensorShapes(config);
  for (const { name, shape } of expected) {
    const t = tensors.get(name);
    if (!t) fail(name, `tensor missing (expected shape [${shape.join(', ')}])`);
    else if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
      fail(name, `expected shape [${shape.join(', ')}], found [${t.shape.join(', ')}]`);
  }
  const known = new Set(expected.map((e) => e.name));
  for (const name of tensors.keys())
    if (!known.has(name))
      fail(name, isHistory(name) ? 'history columns are F64, not F32' : 'unexpected tensor (not a parameter of this model)');
}

/** Version 1's history: an array of rows, each an object with an integer `step` and these numeric fields. */
function parseRows(raw: unknown, field: string, numbers: readonly string[], fail: Fail): Array<Record<string, unknown>> {
  if (!Array.isArray(raw)) return fail(field, 'is not a JSON array');
  raw.forEach((row: unknown, i) => {
    if (!isObject(row) || !Number.isSafeInteger(row.step)) fail(`${field}[${i}]`, 'is not a row with an integer step');
    for (const k of numbers) if (typeof row[k] !== 'number') fail(`${field}[${i}].${k}`, `is ${JSON.stringify(row[k])}, not a number`);
  });
  return raw as Array<Record<string, unknown>>;
}

const isNumbers = (x: unknown, n?: number): boolean =>
  Array.isArray(x) && (n === undefined || x.length === n) && x.every((v) => typeof v === 'number');

/**
 * Version 1's NSA statistics, checked as version 2 stores them (so a file read now can be written
 * again): gate means of 3, a histogram and per-layer list of the same lengths in every row.
 */
function checkNsaRows(rows: Array<Record<string, unknown>>, fail: Fail): Array<Record<string, unknown>> {
  let widths: [number, number] | null = null;
  rows.forEach((row, i) => {
    const s = row.nsa;
    if (s === undefined) return;
    const field = `metrics[${i}].nsa`;
    if (!isObject(s) || !isNumbers(s.gateMean, 3) || !isNumbers(s.histogram) || typeof s.invalid !== 'number' || !Array.isArray(s.perLayer))
      return fail(field, 'is not {gateMean: [3 numbers], histogram: [numbers], invalid: number, perLayer: [...]}');
    const layers = s.perLayer as unknown[];
    if (!layers.every((l) => isObject(l) && isNumbers(l.gateMean, 3) && typeof l.invalid === 'number'))
      fail(`${field}.perLayer`, 'is not a list of {gateMean: [3 numbers], invalid: number}');
    const w: [number, number] = [(s.histogram as number[]).length, layers.length];
    widths ??= w;
    if (w[0] !== widths[0] || w[1] !== widths[1])
      fail(field, `has ${w[0]} histogram bins and ${w[1]} layers, earlier rows ${widths[0]} and ${widths[1]}`);
  });
  return rows;
}
