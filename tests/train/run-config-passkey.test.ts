// The passkey task as a data source of the run config: validateRunConfig names each bad
// data.passkey field, checks the vocabulary and that the task fits model.seqLen, all before any GPU
// work; the passkey preset is valid; the CLI's flags reach it (--preset passkey, --data passkey,
// --set data.source=passkey); the datasets the CLI and the worker build are the task's.
import { describe, expect, it } from 'vitest';

import { parseArgs } from '../../src/cli/args';
import { datasetForRun } from '../../src/cli/data-node';
import { runConfigFromArgs, TRAIN_ARGS } from '../../src/cli/run-config';
import { UsageError } from '../../src/cli/usage';
import { type RunConfig, validateRunConfig } from '../../src/train/config';
import { PASSKEY_TASK_FIELDS, passkeyDatasetForRun, type PasskeyTask, passkeyVocab } from '../../src/train/data/passkey';
import { PASSKEY_TASK, passkeyPreset } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';
import { recallPreset, withDataSource } from '../../src/train/presets/recall-preset';

const errorsOf = (c: RunConfig) => validateRunConfig(c).map((e) => `${e.field}: ${e.message}`);
const withTask = (patch: Partial<PasskeyTask>): RunConfig => {
  const c = passkeyPreset();
  c.data.passkey = { ...c.data.passkey!, ...patch };
  return c;
};

describe('passkey data source', () => {
  it('the passkey preset is valid, an NSA run, and carries its task in data.passkey', () => {
    const c = passkeyPreset();
    expect(validateRunConfig(c)).toEqual([]);
    expect(c.model.attention).toBe('nsa');
    expect(c.data.source).toBe('passkey');
    expect(c.data.passkey).toEqual(PASSKEY_TASK);
    expect('recall' in c.data).toBe(false);
    expect(c.model.vocabSize).toBe(passkeyVocab(PASSKEY_TASK).size);
    c.data.passkey!.digits = 3;
    expect(passkeyPreset().data.passkey!.digits).toBe(PASSKEY_TASK.digits);
  });

  it('names each field that is out of range, and only that field', () => {
    for (const f of PASSKEY_TASK_FIELDS) {
      const depth = f === 'minDepth' || f === 'maxDepth';
      for (const bad of depth ? [NaN, -0.5, 2] : [NaN, 1.5, -1]) {
        const errs = errorsOf(withTask({ [f]: bad }));
        const want = depth
          ? `data.passkey.${f}: must be a number in [0, 1] (got ${bad})`
          : `data.passkey.${f}: must be an integer ≥ ${f === 'digits' ? 2 : 1} (got ${bad})`;
        expect(errs, `${f}=${bad}`).toContain(want);
        expect(
          errs.every((e) => e.startsWith(`data.passkey.${f}: `)),
          errs.join('; '),
        ).toBe(true);
      }
    }
  });

  it('names the field of each infeasible combination, and checks the task against model.seqLen', () => {
    expect(errorsOf(withTask({ minDepth: 0.9, maxDepth: 0.2 }))).toEqual(['data.passkey.minDepth: must not exceed maxDepth (0.9 > 0.2)']);
    const c = passkeyPreset();
    c.model.seqLen = 8;
    expect(errorsOf(c)).toContainEqual(expect.stringMatching(/^data\.passkey\.keyLength: 4 needs seqLen ≥ 9 .*seqLen is 8$/));
    c.model.seqLen = NaN;
    expect(errorsOf(c).filter((e) => e.startsWith('data.passkey'))).toEqual([]);
  });

  it('needs a vocabulary holding every task token', () => {
    const c = passkeyPreset();
    c.model.vocabSize = 19;
    expect(errorsOf(c)).toEqual(['model.vocabSize: must be ≥ 20 for the passkey task (fillers + 2 markers + digits; got 19)']);
    expect(errorsOf(withTask({ digits: 26 }))).toEqual([
      'model.vocabSize: must be ≥ 36 for the passkey task (fillers + 2 markers + digits; got 20)',
    ]);
    // Not checked while a count is invalid (that field is reported instead).
    expect(errorsOf(withTask({ digits: NaN }))).toEqual(['data.passkey.digits: must be an integer ≥ 2 (got NaN)']);
  });

  it('the task is required with the passkey source and rejected with any other', () => {
    const c = preset('tiny');
    c.data.source = 'passkey';
    expect(errorsOf(c)).toEqual([expect.stringMatching(/^data\.passkey: is required when data\.source is 'passkey'/)]);
    const r = passkeyPreset();
    r.data.source = 'random';
    expect(errorsOf(r)).toEqual([`data.passkey: is only used with data.source 'passkey' (source is 'random'): remove it`]);
    const both = recallPreset();
    both.data.passkey = { ...PASSKEY_TASK };
    expect(errorsOf(both)).toEqual([`data.passkey: is only used with data.source 'passkey' (source is 'recall'): remove it`]);
  });

  it('withDataSource adds the default task for passkey, keeps an edited one, drops it (and recall’s) otherwise', () => {
    const tiny = preset('tiny');
    const d = withDataSource(tiny.data, 'passkey');
    expect(d).toEqual({ source: 'passkey', tokenizer: 'byte', passkey: PASSKEY_TASK });
    expect(validateRunConfig({ ...tiny, data: d })).toEqual([]);
    const edited = { ...d, passkey: { ...d.passkey!, keyLength: 6 } };
    expect(withDataSource(edited, 'passkey').passkey!.keyLength).toBe(6);
    expect(withDataSource(edited, 'recall')).toEqual({ source: 'recall', tokenizer: 'byte', recall: recallPreset().data.recall });
    expect(withDataSource(recallPreset().data, 'passkey')).toEqual({ source: 'passkey', tokenizer: 'byte', passkey: PASSKEY_TASK });
    expect(withDataSource(edited, 'brown')).toEqual({ source: 'brown', tokenizer: 'byte' });
  });

  it('the dataset a run builds is the task’s, and refuses a config without it before generating', () => {
    const c = passkeyPreset();
    const ds = datasetForRun(c);
    expect(ds.name).toBe('passkey-d10-k4-f8-depth0.15-0.8');
    expect(ds.scoredPerSequence).toBe(4);
    const bad = withTask({ maxDepth: 3 });
    expect(() => passkeyDatasetForRun(bad)).toThrow(/data\.passkey\.maxDepth: must be a number in \[0, 1\] \(got 3\)/);
    expect(() => passkeyDatasetForRun(recallPreset())).toThrow(/data\.source: must be 'passkey'/);
  });
});

describe('CLI run config with the passkey source', () => {
  const fromArgs = (...argv: string[]) => runConfigFromArgs(parseArgs(argv, TRAIN_ARGS)).config;

  it('--preset passkey is the passkey preset', () => {
    expect(fromArgs('--preset', 'passkey')).toEqual(passkeyPreset());
  });

  it('--data passkey and --set data.source=passkey bring the task, which later --set edit', () => {
    expect(fromArgs('--data', 'passkey').data).toEqual({ source: 'passkey', tokenizer: 'byte', passkey: PASSKEY_TASK });
    const c = fromArgs(
      '--preset',
      'tiny',
      '--set',
      'data.source=passkey',
      '--set',
      'data.passkey.keyLength=6',
      '--set',
      'data.passkey.maxDepth=0.5',
    );
    expect(c.data).toEqual({ source: 'passkey', tokenizer: 'byte', passkey: { ...PASSKEY_TASK, keyLength: 6, maxDepth: 0.5 } });
    expect(validateRunConfig(c)).toEqual([]);
    const r = fromArgs('--preset', 'passkey', '--data', 'recall');
    expect('passkey' in r.data).toBe(false);
    expect(r.data.source).toBe('recall');
  });

  it('a bad --set of a task field is a UsageError naming --set; an invalid task is reported with its field', () => {
    let err: unknown;
    try {
      fromArgs('--data', 'passkey', '--set', 'data.passkey.digitz=3');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toMatchObject({ name: 'UsageError', flag: 'set', value: 'data.passkey.digitz=3' });
    const c = fromArgs('--data', 'passkey', '--set', 'data.passkey.keyLength=40');
    expect(errorsOf(c)).toEqual([expect.stringMatching(/^data\.passkey\.keyLength: 40 needs seqLen ≥ 81/)]);
  });
});
