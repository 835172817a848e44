// Config JSON files: export → import round trip; imports are validated with errors named by field.
import { describe, expect, it } from 'vitest';

import { editConfig } from '../../src/ui/config/edit';
import { ALL_FIELDS } from '../../src/ui/config/fields';
import { isRunConfigValid } from '../../src/ui/config/parse';
import { deletePath, setPath } from '../../src/ui/config/paths';
import { UI_PRESET_NAMES, uiPreset } from '../../src/ui/config/presets';
import { configFileName, configFromJson, configToJson, MAX_CONFIG_FILE_BYTES, readConfigFile } from '../../src/ui/config-io';
import { mulberry32 } from '../../src/util/random';
import { randomEdit } from './config-edits';

const errorsOf = (text: string) => {
  const r = configFromJson(text);
  if (r.ok) throw new Error('expected the import to fail');
  return r.errors;
};

describe('config JSON files', () => {
  it('exports and imports every preset and random valid edits exactly', async () => {
    const r = mulberry32(3);
    const configs = UI_PRESET_NAMES.map((n) => uiPreset(n));
    while (configs.length < 60) {
      const c = randomEdit(uiPreset(UI_PRESET_NAMES[configs.length % 4]), r);
      if (isRunConfigValid(c)) configs.push(c);
    }
    for (const c of configs) {
      const text = configToJson(c, 'tiny');
      const back = await readConfigFile(new File([text], 'x.json'));
      expect(back).toEqual({ ok: true, config: c });
      if (back.ok) expect(JSON.stringify(back.config)).toBe(JSON.stringify(c));
    }
  });

  it('writes a versioned wrapper', () => {
    const x = JSON.parse(configToJson(uiPreset('small'), 'small'));
    expect(Object.keys(x)).toEqual(['format', 'version', 'preset', 'config']);
    expect(x.format).toBe('nsa-playground-config');
    expect(x.version).toBe(1);
  });

  it("imports the CLI's config.json (a bare RunConfig with extra top-level keys)", () => {
    const c = uiPreset('tiny');
    expect(configFromJson(JSON.stringify({ ...c, stepsDone: 300 }))).toEqual({ ok: true, config: c });
  });

  it('names every missing field; an optional one (model.posEncoding, …) may be left out', () => {
    for (const f of ALL_FIELDS) {
      if (f.absent !== undefined) {
        expect(configFromJson(configToJson(deletePath(uiPreset('recall'), f.path))).ok, f.path).toBe(true);
        continue;
      }
      const mechanism = ['window', 'moba', 'dsa'].find((k) => f.path.startsWith(`model.${k}.`));
      const c = mechanism
        ? editConfig(uiPreset('tiny'), 'model.attention', mechanism)
        : f.path.startsWith('model.nsa.')
          ? setPath(uiPreset('tiny'), 'model.attention', 'nsa')
          : f.path.startsWith('data.recall.')
            ? uiPreset('recall')
            : f.path.startsWith('data.passkey.')
              ? uiPreset('passkey')
              : uiPreset('tiny');
      const errs = errorsOf(configToJson(deletePath(c, f.path)));
      expect(errs).toContainEqual({ field: f.path, message: 'is missing' });
    }
  });

  it('names wrong types, unknown keys and invalid values', () => {
    const wrap = (config: unknown) => JSON.stringify({ format: 'nsa-playground-config', version: 1, config });
    expect(errorsOf(wrap(setPath(uiPreset('tiny'), 'train.steps', '300')))).toEqual([
      { field: 'train.steps', message: 'must be a number (got "300")' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('tiny'), 'model.nsa.sharedKV', 1)))).toEqual([
      { field: 'model.nsa.sharedKV', message: 'must be true or false (got 1)' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('tiny'), 'model.depth', 3)))).toEqual([
      { field: 'model.depth', message: 'is not a known setting' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('tiny'), 'model.nKvGroups', 3)))).toEqual([
      { field: 'model.nKvGroups', message: 'must divide nHeads (4 heads, 3 groups)' },
    ]);
    expect(errorsOf(wrap({ model: uiPreset('tiny').model, train: uiPreset('tiny').train }))).toEqual([
      { field: 'data', message: 'is missing' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('tiny'), 'model.nsa.gates', { kind: 'freeze', value: 2 })))[0].field).toBe('model.nsa.gates');
    expect(errorsOf(wrap(setPath(uiPreset('recall'), 'data.recall.pairs', '4')))).toEqual([
      { field: 'data.recall.pairs', message: 'must be a number (got "4")' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('recall'), 'data.recall.depth', 3)))).toEqual([
      { field: 'data.recall.depth', message: 'is not a known setting' },
    ]);
    expect(errorsOf(wrap(setPath(uiPreset('recall'), 'data.recall', 5)))).toEqual([{ field: 'data.recall', message: 'must be an object' }]);
    expect(errorsOf(wrap(setPath(uiPreset('recall'), 'data.recall.queries', 11)))[0]).toEqual({
      field: 'data.recall.queries',
      message: 'must not exceed pairs (11 > 10)',
    });
  });

  it('rejects non-JSON, the wrong format and the wrong version', async () => {
    expect(errorsOf('{"model": ')[0]).toMatchObject({ field: 'file', message: expect.stringMatching(/^is not valid JSON/) });
    expect(errorsOf('[1,2]')).toEqual([{ field: 'file', message: 'must hold a JSON object' }]);
    expect(errorsOf('{"format":"other","version":1,"config":{}}')).toEqual([
      { field: 'format', message: 'must be \'nsa-playground-config\' (got "other")' },
    ]);
    expect(errorsOf('{"format":"nsa-playground-config","version":2,"config":{}}')).toEqual([
      { field: 'version', message: 'this page reads version 1 (got 2)' },
    ]);
    const big = await readConfigFile(new File([new Uint8Array(MAX_CONFIG_FILE_BYTES + 1)], 'big.json'));
    expect(big).toEqual({ ok: false, errors: [{ field: 'file', message: 'is 1,048,577 bytes; a config file is at most 1,048,576' }] });
  });

  it('names files after preset, attention and steps', () => {
    expect(configFileName(uiPreset('recall'), 'recall')).toBe('nsa-playground-recall-nsa-1500steps.json');
    expect(configFileName(uiPreset('tiny'))).toBe('nsa-playground-config-nsa-300steps.json');
  });
});
