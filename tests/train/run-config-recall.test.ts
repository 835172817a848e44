// The recall task as a data source of the run config: validateRunConfig names each bad
// data.recall field, checks the vocabulary and that the task fits model.seqLen; the recall preset
// is valid; the CLI's flags reach it (--preset recall, --data recall, --set data.source=recall).
import { describe, expect, it } from 'vitest';

import { parseArgs } from '../../src/cli/args';
import { runConfigFromArgs, TRAIN_ARGS } from '../../src/cli/run-config';
import { UsageError } from '../../src/cli/usage';
import { type RunConfig, validateRunConfig } from '../../src/train/config';
import { RECALL_TASK_FIELDS, type RecallTask, recallVocab } from '../../src/train/data/recall';
import { preset } from '../../src/train/presets/presets';
import { RECALL_TASK, recallPreset, withDataSource } from '../../src/train/presets/recall-preset';

const errorsOf = (c: RunConfig) => validateRunConfig(c).map((e) => `${e.field}: ${e.message}`);
const withTask = (patch: Partial<RecallTask>): RunConfig => {
  const c = recallPreset();
  c.data.recall = { ...c.data.recall!, ...patch };
  return c;
};

describe('recall data source', () => {
  it('the recall preset is valid and carries its task in data.recall', () => {
    const c = recallPreset();
    expect(validateRunConfig(c)).toEqual([]);
    expect(c.data.source).toBe('recall');
    expect(c.data.recall).toEqual(RECALL_TASK);
    expect(c.model.vocabSize).toBe(recallVocab(RECALL_TASK).size);
    // A copy: editing it leaves the preset alone.
    c.data.recall!.pairs = 1;
    expect(recallPreset().data.recall!.pairs).toBe(RECALL_TASK.pairs);
  });

  it('names each field that is not a valid integer', () => {
    for (const f of RECALL_TASK_FIELDS) {
      for (const bad of [NaN, 1.5, -1]) {
        const errs = errorsOf(withTask({ [f]: bad }));
        expect(errs, `${f}=${bad}`).toContain(
          `data.recall.${f}: must be an integer ≥ ${f === 'minStart' ? 0 : f === 'values' ? 2 : 1} (got ${bad})`,
        );
        expect(
          errs.every((e) => e.startsWith(`data.recall.${f}: `)),
          errs.join('; '),
        ).toBe(true);
      }
    }
  });

  it('names the field of each infeasible combination', () => {
    expect(errorsOf(withTask({ keys: 8 }))).toEqual([expect.stringMatching(/^data\.recall\.pairs: must not exceed keys \(10 > 8\)/)]);
    expect(errorsOf(withTask({ pairs: 6 }))).toEqual(['data.recall.queries: must not exceed pairs (8 > 6)']);
    expect(errorsOf(withTask({ minDistance: 40 }))).toEqual([
      expect.stringMatching(/^data\.recall\.minDistance: minStart 8 and minDistance 40 leave key positions/),
    ]);
    expect(errorsOf(withTask({ minStart: 30 }))).toEqual([expect.stringMatching(/^data\.recall\.minDistance: minStart 30 /)]);
  });

  it('checks the task against model.seqLen', () => {
    const c = recallPreset();
    c.model.seqLen = 32; // pair region 33 − 16 = 17 < 3·10
    expect(errorsOf(c)).toContainEqual(
      expect.stringMatching(/^data\.recall\.pairs: 10 pairs need a pair region of at least 30 tokens; seqLen 32 with 8 queries leaves 17$/),
    );
    // A bad seqLen is reported by the model's own check only.
    c.model.seqLen = NaN;
    expect(errorsOf(c).filter((e) => e.startsWith('data.recall'))).toEqual([]);
  });

  it('needs a vocabulary holding every task token', () => {
    const c = recallPreset();
    c.model.vocabSize = recallVocab(RECALL_TASK).size - 1;
    expect(errorsOf(c)).toEqual([`model.vocabSize: must be ≥ 33 for the recall task (fillers + keys + values; got 32)`]);
    const wide = withTask({ values: 40 });
    expect(errorsOf(wide)).toEqual([`model.vocabSize: must be ≥ 57 for the recall task (fillers + keys + values; got 33)`]);
    // Not checked while a count is invalid (that field is reported instead).
    expect(errorsOf(withTask({ keys: NaN }))).toEqual([`data.recall.keys: must be an integer ≥ 1 (got NaN)`]);
  });

  it('the task is required with the recall source and rejected with any other', () => {
    const c = preset('tiny');
    c.data.source = 'recall';
    expect(errorsOf(c)).toEqual([expect.stringMatching(/^data\.recall: is required when data\.source is 'recall'/)]);
    const r = recallPreset();
    r.data.source = 'random';
    expect(errorsOf(r)).toEqual([`data.recall: is only used with data.source 'recall' (source is 'random'): remove it`]);
  });

  it('withDataSource adds the default task for recall, keeps an edited one, drops it otherwise', () => {
    const tiny = preset('tiny');
    const d = withDataSource(tiny.data, 'recall');
    expect(d).toEqual({ source: 'recall', tokenizer: 'byte', recall: RECALL_TASK });
    expect(validateRunConfig({ ...tiny, data: d })).toEqual([]);
    const edited = { ...d, recall: { ...d.recall!, pairs: 4 } };
    expect(withDataSource(edited, 'recall').recall!.pairs).toBe(4);
    expect(withDataSource(edited, 'brown')).toEqual({ source: 'brown', tokenizer: 'byte' });
  });
});

describe('CLI run config with the recall source', () => {
  const fromArgs = (...argv: string[]) => runConfigFromArgs(parseArgs(argv, TRAIN_ARGS)).config;

  it('--preset recall is the recall preset', () => {
    expect(fromArgs('--preset', 'recall')).toEqual(recallPreset());
  });

  it('--set data.source=recall brings the task, which later --set edit', () => {
    const c = fromArgs('--preset', 'tiny', '--set', 'data.source=recall', '--set', 'data.recall.pairs=6', '--set', 'data.recall.queries=4');
    expect(c.data).toEqual({ source: 'recall', tokenizer: 'byte', recall: { ...RECALL_TASK, pairs: 6, queries: 4 } });
    expect(validateRunConfig(c)).toEqual([]);
  });

  it('--data recall works too; --data brown on the recall preset drops the task', () => {
    expect(fromArgs('--data', 'recall').data.recall).toEqual(RECALL_TASK);
    const c = fromArgs('--preset', 'recall', '--data', 'brown', '--set', 'model.vocabSize=256');
    expect(c.data).toEqual({ source: 'brown', tokenizer: 'byte' });
    expect(validateRunConfig(c)).toEqual([]);
  });

  it('a bad --set of a task field is a UsageError naming --set', () => {
    let err: unknown;
    try {
      fromArgs('--data', 'recall', '--set', 'data.recall.pairz=3');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toMatchObject({ name: 'UsageError', flag: 'set', value: 'data.recall.pairz=3' });
    expect((err as Error).message).toMatch(/unknown field 'pairz'/);
  });

  it('an invalid task is reported with its field before any GPU work', () => {
    const c = fromArgs('--data', 'recall', '--set', 'data.recall.minDistance=60');
    expect(errorsOf(c)).toEqual([expect.stringMatching(/^data\.recall\.minDistance: /)]);
  });
});
