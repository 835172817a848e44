// The panel's schema covers every setting, every validation error lands on an input, number text
// parses strictly, and Start's predicate agrees with the engine's validation.
import { describe, expect, it } from 'vitest';

import { type RunConfig, validateRunConfig } from '../../src/train/config';
import { PASSKEY_TASK } from '../../src/train/presets/passkey-preset';
import { RECALL_TASK } from '../../src/train/presets/recall-preset';
import { flattenConfig } from '../../src/ui/config/diff';
import { editConfig, mechanismDefaults } from '../../src/ui/config/edit';
import { errorFieldPath, groupErrors } from '../../src/ui/config/errors';
import { FIELD_HELP } from '../../src/ui/config/field-help';
import { ALL_FIELDS, errorDomId, fieldDomId, fieldSpec, PASSKEY_FIELDS, RECALL_FIELDS } from '../../src/ui/config/fields';
import { formatNumberText, parseNumberText } from '../../src/ui/config/number-text';
import { isRunConfigValid, runConfigErrors } from '../../src/ui/config/parse';
import { setPath } from '../../src/ui/config/paths';
import { closestPreset, matchingPreset, UI_PRESET_NAMES, uiPreset } from '../../src/ui/config/presets';
import { mulberry32 } from '../../src/util/random';
import { randomEdit } from './config-edits';

describe('config fields', () => {
  it('one field per setting of every preset, and no field without a setting', () => {
    const paths = ALL_FIELDS.map((f) => f.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const name of UI_PRESET_NAMES) {
      const c = uiPreset(name);
      c.model.attention = 'nsa'; // all presets carry an nsa block
      c.data.recall ??= { ...RECALL_TASK }; // only the recall presets have a recall task
      c.data.passkey ??= { ...PASSKEY_TASK }; // only the passkey preset has a passkey task
      for (const k of ['window', 'moba', 'dsa'] as const) Object.assign(c.model, mechanismDefaults(k, c.model.nsa!, c)); // no preset uses them
      // Optional settings (model.posEncoding, model.shortConv, data.recall.layout) may be left out.
      const keys = new Set(flattenConfig(c).keys());
      expect([...keys].sort(), name).toEqual(paths.filter((p) => keys.has(p) || fieldSpec(p)?.absent === undefined).sort());
    }
  });

  it('every preset is valid and matches itself', () => {
    for (const name of UI_PRESET_NAMES) {
      expect(validateRunConfig(uiPreset(name)), name).toEqual([]);
      expect(matchingPreset(uiPreset(name))).toBe(name);
      expect(closestPreset(uiPreset(name))).toBe(name);
    }
  });

  it('every validation error of random edits belongs to an input', () => {
    const r = mulberry32(5);
    let invalid = 0;
    for (let i = 0; i < 1000; i++) {
      const base = uiPreset(UI_PRESET_NAMES[i % UI_PRESET_NAMES.length]);
      if (r() < 0.5) base.model.attention = 'nsa';
      const c = randomEdit(base, r);
      const errs = runConfigErrors(c);
      expect(isRunConfigValid(c)).toBe(errs.length === 0);
      if (errs.length) invalid++;
      expect(groupErrors(errs).other, JSON.stringify(errs)).toEqual([]);
    }
    expect(invalid).toBeGreaterThan(100);
  });

  it('a bad value in any field is reported at that field', () => {
    // Every field applies: NSA attention and the recall source with its task (the passkey source
    // with its task for the passkey fields, the window, MoBA or DSA attention for theirs).
    const base: RunConfig = editConfig(setPath(uiPreset('tiny'), 'model.attention', 'nsa'), 'data.source', 'recall');
    const passkeyBase: RunConfig = editConfig(base, 'data.source', 'passkey');
    expect(validateRunConfig(base)).toEqual([]);
    expect(validateRunConfig(passkeyBase)).toEqual([]);
    for (const f of ALL_FIELDS) {
      const bad =
        f.kind.type === 'int' || f.kind.type === 'number'
          ? NaN
          : f.kind.type === 'checkbox'
            ? 'yes'
            : f.kind.type === 'gates'
              ? { kind: 'boost' }
              : 'bogus';
      // A mechanism's fields on a model of that attention (its options filled in as the panel does).
      const kind = ['window', 'moba', 'dsa'].find((k) => f.path.startsWith(`model.${k}.`));
      const from = kind ? editConfig(base, 'model.attention', kind) : f.path.startsWith('data.passkey.') ? passkeyBase : base;
      if (kind) expect(validateRunConfig(from), kind).toEqual([]);
      const c = setPath(from, f.path, bad);
      const g = groupErrors(runConfigErrors(c));
      expect(g.byField.get(f.path), f.path).toBeDefined();
      expect(g.other).toEqual([]);
    }
  });

  it('maps the engine’s aliases to inputs; keeps unknown fields for the summary', () => {
    expect(errorFieldPath('model.H')).toBe('model.nHeads');
    expect(errorFieldPath('model.nsa')).toBe('model.attention');
    expect(errorFieldPath('data.recall')).toBe('data.source');
    expect(errorFieldPath('data.recall.minStart')).toBe('data.recall.minStart');
    expect(errorFieldPath('model.nsa.d')).toBe('model.nsa.d');
    expect(errorFieldPath('config')).toBeNull();
    const g = groupErrors([
      { field: 'model.nsa.d', message: 'a' },
      { field: 'model.nsa.d', message: 'b' },
      { field: 'config', message: 'c' },
    ]);
    expect(g.byField.get('model.nsa.d')).toEqual(['a', 'b']);
    expect(g.other).toEqual([{ field: 'config', message: 'c' }]);
    expect(fieldDomId('model.nsa.d')).toBe('cfg-model-nsa-d');
    expect(errorDomId('model.nsa.d')).toBe('cfg-model-nsa-d-error');
  });

  it('parses number text strictly', () => {
    for (const [t, v] of [
      ['12', 12],
      [' 3e-4 ', 3e-4],
      ['-0.5', -0.5],
      ['.5', 0.5],
      ['1.', 1],
      ['1E3', 1000],
    ] as const) {
      expect(parseNumberText(t)).toBe(v);
    }
    for (const t of ['', ' ', 'abc', '1e', '1e-', '0x10', 'Infinity', '1,5', '--1', '1 2']) expect(parseNumberText(t)).toBeNaN();
    expect(formatNumberText(1e-8)).toBe('1e-8');
    expect(formatNumberText(NaN)).toBe('');
    expect(parseNumberText(formatNumberText(0.1 + 0.2))).toBe(0.1 + 0.2);
  });

  it('every field has a tooltip, and every tooltip a field', () => {
    expect(Object.keys(FIELD_HELP).sort()).toEqual(ALL_FIELDS.map((f) => f.path).sort());
    for (const text of Object.values(FIELD_HELP)) expect(text.length).toBeGreaterThan(20);
  });

  it('switching a dense config without an nsa block to NSA fills in its preset’s block', () => {
    const c = uiPreset('small');
    c.model.attention = 'dense';
    delete c.model.nsa;
    const next = editConfig(c, 'model.attention', 'nsa');
    expect(next.model.nsa).toEqual(uiPreset('small').model.nsa);
    expect(isRunConfigValid(next)).toBe(true);
    expect(c.model.attention).toBe('dense'); // the input is not mutated
    expect(editConfig(uiPreset('tiny'), 'train.steps', 7).train.steps).toBe(7);
  });

  it('the recall source: its task fields, added and dropped with the source, errors at each field', () => {
    expect(RECALL_FIELDS.map((f) => f.path)).toEqual(
      ['keys', 'values', 'fillers', 'pairs', 'queries', 'minDistance', 'minStart', 'layout'].map((k) => `data.recall.${k}`),
    );
    const tiny = uiPreset('tiny');
    const recall = editConfig(tiny, 'data.source', 'recall');
    expect(recall.data.recall).toEqual(RECALL_TASK);
    expect(isRunConfigValid(recall)).toBe(true);
    const edited = editConfig(recall, 'data.recall.pairs', 12);
    expect(editConfig(edited, 'data.source', 'recall').data.recall!.pairs).toBe(12);
    const back = editConfig(edited, 'data.source', 'copy');
    expect('recall' in back.data).toBe(false);
    expect(isRunConfigValid(back)).toBe(true);
    // Each infeasible setting is shown at the field that names it; none goes to the summary.
    const g = groupErrors(runConfigErrors(editConfig(editConfig(recall, 'data.recall.keys', 8), 'data.recall.minStart', 40)));
    expect(g.other).toEqual([]);
    expect([...g.byField.keys()].sort()).toEqual(['data.recall.minDistance', 'data.recall.pairs']);
    expect(g.byField.get('data.recall.pairs')!.join()).toMatch(/must not exceed keys \(10 > 8\)/);
    // The recall source without a task (a hand-made config) is shown at the source.
    const bare = setPath(tiny, 'data.source', 'recall');
    expect(groupErrors(runConfigErrors(bare)).byField.get('data.source')!.join()).toMatch(/is required when data.source is 'recall'/);
  });

  it('the passkey source: its task fields, added and dropped with the source, errors at each field', () => {
    expect(PASSKEY_FIELDS.map((f) => f.path)).toEqual(
      ['digits', 'keyLength', 'fillers', 'minDepth', 'maxDepth'].map((k) => `data.passkey.${k}`),
    );
    const tiny = uiPreset('tiny');
    const passkey = editConfig(tiny, 'data.source', 'passkey');
    expect(passkey.data.passkey).toEqual(PASSKEY_TASK);
    expect(isRunConfigValid(passkey)).toBe(true);
    const edited = editConfig(passkey, 'data.passkey.keyLength', 6);
    expect(editConfig(edited, 'data.source', 'passkey').data.passkey!.keyLength).toBe(6);
    const back = editConfig(edited, 'data.source', 'recall');
    expect('passkey' in back.data).toBe(false);
    expect(isRunConfigValid(back)).toBe(true);
    // Each infeasible setting is shown at the field that names it; none goes to the summary.
    const g = groupErrors(runConfigErrors(editConfig(editConfig(passkey, 'data.passkey.minDepth', 0.9), 'data.passkey.keyLength', 40)));
    expect(g.other).toEqual([]);
    expect([...g.byField.keys()].sort()).toEqual(['data.passkey.minDepth']);
    expect(g.byField.get('data.passkey.minDepth')!.join()).toBe('must not exceed maxDepth (0.9 > 0.8)');
    const long = groupErrors(runConfigErrors(editConfig(passkey, 'data.passkey.keyLength', 40)));
    expect(long.byField.get('data.passkey.keyLength')!.join()).toMatch(/^40 needs seqLen ≥ 81/);
    expect(errorFieldPath('data.passkey')).toBe('data.source');
    const bare = setPath(tiny, 'data.source', 'passkey');
    expect(groupErrors(runConfigErrors(bare)).byField.get('data.source')!.join()).toMatch(/is required when data.source is 'passkey'/);
  });
});
