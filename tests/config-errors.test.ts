// One form for configuration errors (CPU only): every validator returns ConfigIssue lists naming
// the field, every assert* throws an InvalidConfigError (name, issues, instanceof), and the error
// classes set their name and carry the fields a caller needs. (NoAdapterError lives in
// src/gpu/node-device.ts, which the fast tier must not import: tests/tiers.test.ts.)
import { describe, expect, it } from 'vitest';

import * as publicApi from '../src/browser';
import { applySet, intFlag, numFlag, parseArgs } from '../src/cli/args';
import { isUserError } from '../src/cli/main';
import { runConfigFromArgs, setAttention, TRAIN_ARGS } from '../src/cli/run-config';
import { asUsage, UsageError } from '../src/cli/usage';
import { type ConfigIssue, formatConfigIssues, InvalidConfigError, prefixIssues } from '../src/definitions/config-issue';
import { assertValidModelConfig, type ModelConfig, validateModelConfig } from '../src/definitions/model-config';
import { assertNsaConfig, type NsaConfig, validateNsaConfig } from '../src/definitions/nsa-config';
import { acquireBrowserGpu, WebGpuUnavailableError } from '../src/gpu/browser-device';
import { assertNsaOp, NsaOpConfigError, validateNsaOp } from '../src/model/nsa/op-bind';
import { assertValidRunConfig, type RunConfig, validateRunConfig, validateTrainConfig } from '../src/train/config';
import { createRecallDataset, recallDatasetForRun, validateRecallTask } from '../src/train/data/recall';
import { preset, type PresetName } from '../src/train/presets/presets';
import { RECALL_TASK, recallPreset } from '../src/train/presets/recall-preset';
import { parseRunConfig, runConfigErrors } from '../src/ui/config/parse';
import { configFromJson } from '../src/ui/config-io';
import { WorkerCrashedError } from '../src/worker/client';

const NSA: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const SHAPE = { B: 2, T: 16, H: 4, G: 2, dk: 8, dv: 8 };

/** The error `f` throws (fails the test when it throws none). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** `f` throws an InvalidConfigError (exactly that class unless `cls` says) whose issues name `fields`. */
function expectInvalid(
  f: () => unknown,
  fields: string[],
  cls: new (...a: never[]) => InvalidConfigError = InvalidConfigError,
): InvalidConfigError {
  const e = thrown(f);
  expect(e).toBeInstanceOf(Error);
  expect(e).toBeInstanceOf(InvalidConfigError);
  expect(e).toBeInstanceOf(cls);
  const err = e as InvalidConfigError;
  expect(err.name).toBe(cls.name);
  expect(err.issues.length).toBeGreaterThan(0);
  expect(err.issues.map((i) => i.field)).toEqual(fields);
  for (const i of err.issues) {
    expect(i.message.length).toBeGreaterThan(0);
    expect(err.message).toContain(`${i.field}: ${i.message}`);
  }
  return err;
}

const fieldsOf = (issues: readonly ConfigIssue[]) => issues.map((i) => i.field);

describe('ConfigIssue and InvalidConfigError', () => {
  const issues: ConfigIssue[] = [
    { field: 'model.dim', message: 'must be a positive integer (got 0)' },
    { field: 'train.lrMax', message: 'must be in (0, 10] (got -1)' },
  ];

  it('formats one `field: message` line per issue', () => {
    expect(formatConfigIssues(issues)).toBe('model.dim: must be a positive integer (got 0)\ntrain.lrMax: must be in (0, 10] (got -1)');
    expect(formatConfigIssues([])).toBe('');
  });

  it('is an Error named InvalidConfigError, with its context, issues and fields', () => {
    const e = new InvalidConfigError('invalid run config', issues);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('InvalidConfigError');
    expect(e.context).toBe('invalid run config');
    expect(e.message).toBe(`invalid run config:\n${formatConfigIssues(issues)}`);
    expect(e.issues).toEqual(issues);
    expect(e.fields).toEqual(['model.dim', 'train.lrMax']);
    expect(String(e).startsWith('InvalidConfigError: invalid run config:')).toBe(true);
    // A copy: editing the list given leaves the error alone.
    issues[0].message = 'edited';
    expect(e.issues[0].message).toBe('must be a positive integer (got 0)');
  });

  it('prefixes fields for a nested object', () => {
    expect(prefixIssues('data.recall', [{ field: 'pairs', message: 'm' }])).toEqual([{ field: 'data.recall.pairs', message: 'm' }]);
  });

  it('is exported by the public API with NsaOpConfigError and the format', () => {
    expect(publicApi.InvalidConfigError).toBe(InvalidConfigError);
    expect(publicApi.formatConfigIssues).toBe(formatConfigIssues);
    expect(new publicApi.NsaOpConfigError([{ field: 'nsa.d', message: 'm' }])).toBeInstanceOf(publicApi.InvalidConfigError);
  });
});

describe('validators return ConfigIssue lists naming the field; assert* throw InvalidConfigError', () => {
  it('NSA config', () => {
    expect(validateNsaConfig(NSA, SHAPE)).toEqual([]);
    expect(fieldsOf(validateNsaConfig({ ...NSA, d: 3 }))).toEqual(['nsa.d', 'nsa.d']);
    expect(fieldsOf(validateNsaConfig(NSA, { H: 6, G: 4 }))).toEqual(['shape.H']);
    expect(() => assertNsaConfig(NSA, SHAPE)).not.toThrow();
    const e = expectInvalid(() => assertNsaConfig({ ...NSA, w: 0 }, { G: 0 }), ['nsa.w', 'shape.G']);
    expect(e.message.split('\n')[0]).toBe('invalid NSA config:');
  });

  const model = (): ModelConfig => preset('tiny').model;

  it('model config', () => {
    expect(validateModelConfig(model())).toEqual([]);
    expect(fieldsOf(validateModelConfig({ ...model(), dim: 0, dk: 3 }))).toEqual(['model.dim', 'model.dk']);
    const nsa = { ...model(), attention: 'nsa' as const, nsa: { ...NSA, d: 3, sharedKV: false, gates: { kind: 'none' as const } } };
    expect(fieldsOf(validateModelConfig(nsa))).toContain('model.nsa.d');
    expect(fieldsOf(validateModelConfig({ ...model(), attention: 'nsa', nsa: undefined }))).toEqual(['model.nsa']);
    expect(() => assertValidModelConfig(model())).not.toThrow();
    const e = expectInvalid(() => assertValidModelConfig({ ...model(), nLayers: 0 }), ['model.nLayers']);
    expect(e.context).toBe('invalid model config');
  });

  it('train and run config', () => {
    const c = preset('tiny');
    expect(validateTrainConfig(c.train)).toEqual([]);
    expect(fieldsOf(validateTrainConfig({ ...c.train, steps: 0, lrMin: 1, lrMax: 0.5 }))).toEqual(['train.steps', 'train.lrMin']);
    expect(validateRunConfig(c)).toEqual([]);
    const bad: RunConfig = {
      ...c,
      model: { ...c.model, seqLen: 0 },
      data: { ...c.data, tokenizer: 'x' as RunConfig['data']['tokenizer'] },
    };
    expect(fieldsOf(validateRunConfig(bad))).toEqual(['model.seqLen', 'data.tokenizer']);
    expect(() => assertValidRunConfig(c)).not.toThrow();
    const e = expectInvalid(() => assertValidRunConfig({ ...c, train: { ...c.train, batchSize: 0 } }), ['train.batchSize']);
    expect(e.context).toBe('invalid run config');
    expect(expectInvalid(() => assertValidRunConfig({ ...c, train: { ...c.train, seed: -1 } }, 'run tiny'), ['train.seed']).context).toBe(
      'run tiny',
    );
  });

  it('recall task: task-relative fields; inside a run config under data.recall', () => {
    expect(validateRecallTask(RECALL_TASK, 256)).toEqual([]);
    expect(fieldsOf(validateRecallTask({ ...RECALL_TASK, keys: 0 }, 256))).toEqual(['keys']);
    expect(fieldsOf(validateRecallTask({ ...RECALL_TASK, queries: RECALL_TASK.pairs + 1 }, 256))).toContain('queries');
    const c = recallPreset();
    c.data.recall = { ...c.data.recall!, fillers: 0 };
    expect(fieldsOf(validateRunConfig(c))).toEqual(['data.recall.fillers']);
  });

  it('recall dataset: InvalidConfigError naming the task field (run config: the full path)', () => {
    const opts = { batchSize: 1, seqLen: recallPreset().model.seqLen, seed: 1 };
    expectInvalid(() => createRecallDataset({ kind: 'recall', ...RECALL_TASK, values: 1 }, opts), ['values']);
    const c = recallPreset();
    c.data.recall = { ...c.data.recall!, pairs: 0 };
    expectInvalid(() => recallDatasetForRun(c), ['data.recall.pairs']);
    expectInvalid(() => recallDatasetForRun(preset('tiny')), ['data.source']);
    expectInvalid(() => recallDatasetForRun({ ...recallPreset(), data: { source: 'recall', tokenizer: 'byte' } }), ['data.recall']);
  });

  it('NSA op: NsaOpConfigError, an InvalidConfigError with its own name', () => {
    expect(validateNsaOp(SHAPE, NSA)).toEqual([]);
    expect(fieldsOf(validateNsaOp({ ...SHAPE, B: 0 }, { ...NSA, phi: 'mlp' }))).toEqual(['nsa.phi', 'shape.B']);
    expect(fieldsOf(validateNsaOp({ ...SHAPE, dk: 256 }, NSA))).toEqual(['shape.dk']);
    expect(() => assertNsaOp(SHAPE, NSA)).not.toThrow();
    const e = expectInvalid(() => assertNsaOp({ ...SHAPE, T: 0 }, { ...NSA, d: 3 }), ['nsa.d', 'nsa.d', 'shape.T'], NsaOpConfigError);
    expect(e.name).toBe('NsaOpConfigError');
    expect(e.context).toBe('invalid NSA op');
  });

  it('presets: an unknown name is an InvalidConfigError on the field preset', () => {
    expectInvalid(() => preset('huge' as PresetName), ['preset']);
  });

  it('UI parsing: shape and validation issues name the field', () => {
    const c = preset('tiny');
    const shape = parseRunConfig({ ...c, model: { ...c.model, dim: 'wide' } });
    expect(shape.ok).toBe(false);
    if (!shape.ok) expect(fieldsOf(shape.errors)).toEqual(['model.dim']);
    const invalid = parseRunConfig({ ...c, train: { ...c.train, evalBatches: -1 } });
    expect(invalid.ok).toBe(false);
    if (!invalid.ok) expect(fieldsOf(invalid.errors)).toEqual(['train.evalBatches']);
    const file = configFromJson('{');
    expect(file.ok).toBe(false);
    if (!file.ok) expect(fieldsOf(file.errors)).toEqual(['file']);
    expect(fieldsOf(runConfigErrors({ ...c, train: { ...c.train, logEvery: 0 } }))).toEqual(['train.logEvery']);
  });
});

describe('error classes set their name and carry fields', () => {
  /** `f` throws a UsageError for `flag`. */
  function expectUsage(f: () => unknown, flag: string | undefined, value?: string): UsageError {
    const e = thrown(f);
    expect(e).toBeInstanceOf(UsageError);
    const u = e as UsageError;
    expect(u.name).toBe('UsageError');
    expect(u.flag).toBe(flag);
    expect(u.value).toBe(value);
    return u;
  }

  it('UsageError: every flag error names its flag and value', () => {
    expectUsage(() => parseArgs(['--steps'], TRAIN_ARGS), 'steps');
    expectUsage(() => parseArgs(['--set', 'oops'], TRAIN_ARGS), 'set', 'oops');
    const args = parseArgs(['--steps', '1.5', '--lr', 'fast'], TRAIN_ARGS);
    expectUsage(() => intFlag(args, 'steps'), 'steps', '1.5');
    expectUsage(() => numFlag(args, 'lr'), 'lr', 'fast');
    const c = preset('tiny');
    expectUsage(() => applySet(c, 'nope.x', '1'), 'set', 'nope.x=1');
    expectUsage(() => applySet(c, 'train.nope', '1'), 'set', 'train.nope=1');
    expectUsage(() => applySet(c, 'train.steps', 'many'), 'set', 'train.steps=many');
    expectUsage(() => runConfigFromArgs(parseArgs(['--preset', 'huge'], TRAIN_ARGS)), 'preset', 'huge');
    expectUsage(() => setAttention(c, 'linear'), 'attention', 'linear');
    expectUsage(() => parseArgs(['--bogus=1'], { values: ['steps'] }), 'bogus', '1');
  });

  it('asUsage wraps other errors (keeping the cause) and passes UsageErrors through', () => {
    const inner = new UsageError('--steps must be an integer', { flag: 'steps', value: 'x' });
    expect(
      thrown(() =>
        asUsage(() => {
          throw inner;
        }),
      ),
    ).toBe(inner);
    const cause = new Error('plain');
    const e = expectUsage(
      () =>
        asUsage(() => {
          throw cause;
        }),
      undefined,
    );
    expect(e.message).toBe('plain');
    expect(e.cause).toBe(cause);
  });

  it("runMain treats UsageError and InvalidConfigError as the user's (exit 2), nothing else", () => {
    expect(isUserError(new UsageError('x'))).toBe(true);
    expect(isUserError(new InvalidConfigError('c', [{ field: 'f', message: 'm' }]))).toBe(true);
    expect(isUserError(new NsaOpConfigError([{ field: 'f', message: 'm' }]))).toBe(true);
    expect(isUserError(new Error('x'))).toBe(false);
  });

  it('WebGpuUnavailableError: why (Node has no navigator.gpu)', async () => {
    const e = await acquireBrowserGpu().then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(WebGpuUnavailableError);
    expect((e as WebGpuUnavailableError).name).toBe('WebGpuUnavailableError');
    expect((e as WebGpuUnavailableError).reason).toBe('no-navigator-gpu');
    expect(new WebGpuUnavailableError('no-adapter', 'm').reason).toBe('no-adapter');
  });

  it("WorkerCrashedError: why, and the worker's message", () => {
    const failed = new WorkerCrashedError('failed', 'SyntaxError: x');
    expect([failed.name, failed.reason, failed.workerMessage, failed.message]).toEqual([
      'WorkerCrashedError',
      'failed',
      'SyntaxError: x',
      'The trainer worker failed: SyntaxError: x',
    ]);
    expect(new WorkerCrashedError('failed', '').message).toMatch(/could not be loaded/);
    const gone = new WorkerCrashedError('terminated');
    expect([gone.name, gone.reason, gone.message]).toEqual(['WorkerCrashedError', 'terminated', 'The trainer worker was terminated.']);
    expect(gone).toBeInstanceOf(Error);
  });
});
