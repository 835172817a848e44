// The config in the URL hash: every preset and random edits survive encode → decode exactly;
// bad hashes fall back to the preset with a message naming the problem.
import { describe, expect, it } from 'vitest';

import { editConfig } from '../../src/ui/config/edit';
import { isRunConfigValid } from '../../src/ui/config/parse';
import { closestPreset, UI_PRESET_NAMES, uiPreset } from '../../src/ui/config/presets';
import { decodeConfigHash, decodeValue, encodeConfigHash, encodeValue, foreignParams, hasNonFiniteNumber } from '../../src/ui/url-state';
import { mulberry32 } from '../../src/util/random';
import { randomEdit } from './config-edits';

/** What a browser does to the hash when it is set: URL parsing percent-encodes some characters. */
const throughUrl = (body: string): string => {
  const u = new URL('https://example.test/nsa/');
  u.hash = body;
  return u.hash;
};

describe('URL hash config', () => {
  it('round-trips every preset with an empty diff', () => {
    for (const name of UI_PRESET_NAMES) {
      const body = encodeConfigHash(uiPreset(name), name);
      expect(body).toBe(`v=1&preset=${name}`);
      const back = decodeConfigHash(throughUrl(body));
      expect(back.error).toBeUndefined();
      expect(back.preset).toBe(name);
      expect(back.config).toEqual(uiPreset(name));
    }
  });

  it('round-trips random valid edits of every preset bit for bit, diffed against any preset', () => {
    const r = mulberry32(7);
    let valid = 0;
    for (let i = 0; i < 400; i++) {
      const from = UI_PRESET_NAMES[i % UI_PRESET_NAMES.length];
      const edited = randomEdit(uiPreset(from), r);
      if (!isRunConfigValid(edited)) continue;
      valid++;
      const against = UI_PRESET_NAMES[Math.floor(r() * UI_PRESET_NAMES.length)];
      for (const preset of [against, undefined]) {
        const back = decodeConfigHash(throughUrl(encodeConfigHash(edited, preset)));
        expect(back.error).toBeUndefined();
        expect(back.preset).toBe(preset ?? closestPreset(edited));
        expect(back.config).toEqual(edited);
        // Exact numbers, not just toEqual's: compare the JSON text.
        expect(JSON.stringify(back.config)).toBe(JSON.stringify(edited));
      }
    }
    expect(valid).toBeGreaterThan(100); // the generator must produce enough valid configs to mean something
  });

  it('round-trips a dense config without an nsa block', () => {
    const c = uiPreset('tiny');
    c.model.attention = 'dense';
    delete c.model.nsa;
    const body = encodeConfigHash(c, 'tiny');
    expect(body).toBe('v=1&preset=tiny&model.attention=dense&model.nsa=null');
    const back = decodeConfigHash(throughUrl(body));
    expect(back.error).toBeUndefined();
    expect(back.config).toEqual(c);
    expect('nsa' in back.config.model).toBe(false);
  });

  it('round-trips the recall source and its task, against the recall preset or another', () => {
    const r = uiPreset('recall');
    r.data.recall!.pairs = 12;
    r.data.recall!.minStart = 0;
    expect(encodeConfigHash(r, 'recall')).toBe('v=1&preset=recall&data.recall.pairs=12&data.recall.minStart=0');
    // On the tiny preset, the recall source brings every task field.
    const t = editConfig(uiPreset('tiny'), 'data.source', 'recall');
    const body = encodeConfigHash(t, 'tiny');
    expect(body).toBe(
      'v=1&preset=tiny&data.source=recall&data.recall.keys=16&data.recall.values=16&data.recall.fillers=1&data.recall.pairs=10&data.recall.queries=8&data.recall.minDistance=15&data.recall.minStart=8',
    );
    // The recall preset on another source drops the task: data.recall=null.
    const b = editConfig(uiPreset('recall'), 'data.source', 'copy');
    expect(encodeConfigHash(b, 'recall')).toBe('v=1&preset=recall&data.source=copy&data.recall=null');
    for (const [c, preset] of [
      [r, 'recall'],
      [r, 'tiny'],
      [t, 'tiny'],
      [t, 'recall'],
      [b, 'recall'],
      [b, 'small'],
    ] as const) {
      const back = decodeConfigHash(throughUrl(encodeConfigHash(c, preset)));
      expect(back.error).toBeUndefined();
      expect(back.config).toEqual(c);
    }
    expect('recall' in decodeConfigHash(encodeConfigHash(b, 'recall')).config.data).toBe(false);
  });

  it('round-trips the passkey source and its task; another source drops it (data.passkey=null)', () => {
    const p = uiPreset('passkey');
    p.data.passkey!.keyLength = 6;
    p.data.passkey!.maxDepth = 0.5;
    expect(encodeConfigHash(p, 'passkey')).toBe('v=1&preset=passkey&data.passkey.keyLength=6&data.passkey.maxDepth=0.5');
    const t = editConfig(uiPreset('tiny'), 'data.source', 'passkey');
    expect(encodeConfigHash(t, 'tiny')).toBe(
      'v=1&preset=tiny&data.source=passkey&data.passkey.digits=10&data.passkey.keyLength=4&data.passkey.fillers=8&data.passkey.minDepth=0.15&data.passkey.maxDepth=0.8',
    );
    const r = editConfig(uiPreset('passkey'), 'data.source', 'copy');
    expect(encodeConfigHash(r, 'passkey')).toBe('v=1&preset=passkey&data.source=copy&data.passkey=null');
    for (const [c, preset] of [
      [p, 'passkey'],
      [p, 'tiny'],
      [t, 'tiny'],
      [t, 'passkey'],
      [r, 'passkey'],
      [r, 'small'],
    ] as const) {
      const back = decodeConfigHash(throughUrl(encodeConfigHash(c, preset)));
      expect(back.error).toBeUndefined();
      expect(back.config).toEqual(c);
    }
    // A bad task value in a link is left out, named by its field.
    const bad = decodeConfigHash('#v=1&preset=passkey&data.passkey.minDepth=0.9');
    expect(bad.error).toMatch(/data\.passkey\.minDepth: must not exceed maxDepth \(0\.9 > 0\.8\)/);
    expect(bad.config).toEqual(uiPreset('passkey'));
  });

  it('is readable: each changed setting as path=value', () => {
    const c = uiPreset('tiny');
    c.model.attention = 'dense';
    c.train.steps = 500;
    c.model.nsa!.gates = { kind: 'force', branch: 'sel' };
    expect(encodeConfigHash(c, 'tiny')).toBe(
      'v=1&preset=tiny&model.attention=dense&model.nsa.gates={%22kind%22:%22force%22,%22branch%22:%22sel%22}&train.steps=500',
    );
  });

  it('invalid edits keep the valid settings, leave the bad ones out and name them', () => {
    const r = mulberry32(11);
    let invalid = 0;
    for (let i = 0; i < 200; i++) {
      const from = UI_PRESET_NAMES[i % UI_PRESET_NAMES.length];
      const edited = randomEdit(uiPreset(from), r);
      if (isRunConfigValid(edited)) continue;
      invalid++;
      const back = decodeConfigHash(throughUrl(encodeConfigHash(edited, from)));
      expect(isRunConfigValid(back.config)).toBe(true);
      expect(back.preset).toBe(from);
      expect(back.error).toMatch(
        /^(One setting|\d+ settings) of the link could not be used and (was|were) left out: (model|train|data)\.[A-Za-z0-9.]+: .+/,
      );
    }
    expect(invalid).toBeGreaterThan(20);
  });

  it('a link with one bad key keeps the valid ones and names the bad one', () => {
    const back = decodeConfigHash('#v=1&preset=tiny&train.steps=7&model.depth=3&model.attention=nsa');
    expect(back.config.train.steps).toBe(7);
    expect(back.config.model.attention).toBe('nsa');
    expect(back.error).toBe(
      "One setting of the link could not be used and was left out: model.depth: is not a known setting. The link's other 2 settings were applied.",
    );
    const two = decodeConfigHash('#v=1&preset=small&train.steps=9&train.lrMax=abc&model.dim=-1');
    expect(two.config).toEqual({ ...uiPreset('small'), train: { ...uiPreset('small').train, steps: 9 } });
    expect(two.error).toMatch(
      /^2 settings of the link .* left out: train.lrMax: .*; model.dim: .* The link's other setting was applied\.$/,
    );
  });

  it('text that is not a number never reaches the URL', () => {
    const c = uiPreset('tiny');
    expect(hasNonFiniteNumber(c)).toBe(false);
    c.train.lrMax = NaN;
    expect(hasNonFiniteNumber(c)).toBe(true);
    const g = uiPreset('tiny');
    g.model.nsa = { ...g.model.nsa!, gates: { kind: 'freeze', value: [0.5, NaN, 1] } };
    expect(hasNonFiniteNumber(g)).toBe(true);
  });

  it('keeps non-finite numbers so the page can show the field error', () => {
    const c = uiPreset('tiny');
    c.train.lrMax = NaN;
    const body = encodeConfigHash(c, 'tiny');
    expect(body).toContain('train.lrMax=NaN');
    const back = decodeConfigHash(body);
    expect(back.error).toContain('train.lrMax: must be in (0, 10] (got NaN)');
  });

  it('string values that look like JSON are quoted, so they decode as strings', () => {
    for (const s of ['nsa', '1', 'true', 'null', 'NaN', '', '{"a":1}', 'a b&c=d#e%f']) {
      expect(decodeValue(encodeValue(s))).toBe(s);
    }
    for (const v of [0, -3, 1e-8, 0.1 + 0.2, true, false, null, [0.5, 0.25, 1], { kind: 'none' }, NaN, Infinity]) {
      expect(decodeValue(encodeValue(v))).toEqual(v);
    }
  });

  it.each([
    ['', undefined],
    ['#', undefined],
    ['#tab=charts', undefined],
    ['#v=2&preset=tiny', 'it is format v=2, this page reads v=1'],
    ['#preset=small&train.steps=5', 'it has no format version (v=1)'],
    [
      '#v=1&preset=huge',
      "unknown preset 'huge' (known: tiny, small, m7c-125m, recall, mqar-tiny, mqar, mqar-long, long, passkey, passkey-long)",
    ],
    ['#v=1&preset=tiny&model.depth=3', 'model.depth: is not a known setting'],
    ['#v=1&preset=tiny&train.steps=5&train.steps=6', 'train.steps: is set twice'],
    ['#v=1&preset=tiny&train.steps=abc', 'train.steps: must be a number (got "abc")'],
    ['#v=1&preset=tiny&train.steps=0', 'train.steps: must be an integer ≥ 1 (got 0)'],
    ['#v=1&preset=tiny&model.attention=sparse', "model.attention: must be one of 'dense', 'nsa', 'window', 'moba', 'dsa' (got sparse)"],
    ['#v=1&preset=tiny&train.steps=null', 'train.steps: is missing'],
    ['#v=1&preset=tiny&model.nsa={}', 'model.nsa: is not a known setting'],
    ['#v=1&preset=tiny&model.attention=nsa&model.nsa.d=3', 'model.nsa.d: d (3) must divide l (8)'],
    ['#v=1&preset=tiny&model.nsa.gates={"kind":"force"}', "model.nsa.gates: must be {kind:'none'}"],
    ['#v=1&preset=tiny&train.steps=%E0%A4%A', 'it is not valid URL encoding (a stray %?)'],
    ['#v=1&preset=tiny&data.source=recall', "data.recall: is required when data.source is 'recall'"],
    ['#v=1&preset=recall&data.source=brown', "data.recall: is only used with data.source 'recall' (source is 'brown')"],
    ['#v=1&preset=recall&data.recall={}', 'data.recall: is not a known setting'],
    ['#v=1&preset=recall&data.recall.pairs=17', 'data.recall.pairs: must not exceed keys (17 > 16)'],
    ['#v=1&preset=recall&model.vocabSize=20', 'model.vocabSize: must be ≥ 33 for the recall task'],
  ])('hash %s → %s', (hash, error) => {
    const back = decodeConfigHash(hash);
    if (error === undefined) {
      expect(back.error).toBeUndefined();
      expect(back.config).toEqual(uiPreset(back.preset));
    } else if (/format|version|preset '|URL encoding/.test(error)) {
      // The link as a whole is unreadable: the preset instead.
      expect(back.error).toContain(error);
      expect(back.error).toMatch(/Showing the (tiny|small|m7c-125m|recall|long|passkey) preset instead\.$/);
      expect(back.config).toEqual(uiPreset(back.preset));
    } else {
      // One bad key: left out and named; the rest of the link stays.
      expect(back.error).toContain(error.startsWith('data.recall: is') ? error.slice('data.recall: '.length) : error);
      expect(back.error).toMatch(/could not be used and (was|were) left out: /);
      expect(isRunConfigValid(back.config)).toBe(true);
    }
  });

  it('an unknown preset falls back to the default preset', () => {
    expect(decodeConfigHash('#v=1&preset=huge').preset).toBe('tiny');
    expect(decodeConfigHash('#v=1&preset=small&train.steps=0').preset).toBe('small');
  });

  it('keeps foreign hash parameters when rewriting', () => {
    const keep = foreignParams('#v=1&preset=tiny&train.steps=9&tab=charts&q=a%26b');
    expect(keep).toEqual([
      ['tab', 'charts'],
      ['q', 'a&b'],
    ]);
    const body = encodeConfigHash(uiPreset('small'), 'small', keep);
    expect(body).toBe('v=1&preset=small&tab=charts&q=a%26b');
    expect(decodeConfigHash(body).config).toEqual(uiPreset('small'));
  });
});
