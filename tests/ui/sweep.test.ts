// The page's sweep as data: planned from the learn grid (its checks by the form's labels), the next
// setting (a started one first), per-setting results from a run history, the table's sort, its
// figure and CSV, and its storage (a value that is not a sweep is set aside, never half-read).
import { describe, expect, it } from 'vitest';

import type { StepMetrics } from '../../src/train/types';
import type { LibraryEntry } from '../../src/ui/library/entry';
import { filterByTag, tagChoices } from '../../src/ui/library/tag-filter';
import { sweepCsv, sweepFigureSvg } from '../../src/ui/sweep/sweep-figure';
import { defaultSweepForm, readSweepForm } from '../../src/ui/sweep/sweep-form';
import { nextSetting, planSweep, settingLabel, settingRunName, sweepName, sweepTag, withSetting } from '../../src/ui/sweep/sweep-plan';
import { settingResult, sortResults, sweepResults } from '../../src/ui/sweep/sweep-results';
import { createSweepStore } from '../../src/ui/sweep/sweep-state';
import { type KeyValue, loadSweep, saveSweep, SWEEP_KEY } from '../../src/ui/sweep/sweep-storage';

const grid = {
  preset: 'recall' as const,
  mechanisms: ['nsa' as const, 'dense' as const],
  seeds: [1, 2],
  lrs: [1e-3],
  steps: 8,
  evalEvery: 4,
  target: 0.5,
};

function memory(): KeyValue & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v), removeItem: (k) => void map.delete(k) };
}

const step = (i: number): StepMetrics => ({
  step: i,
  loss: 3 - i / 10,
  lr: 1e-3,
  gradNorm: 1,
  tokensPerSecond: 100,
  stepMs: 250,
  elapsedMs: 250 * (i + 1),
});

describe('sweep plan', () => {
  it('crosses mechanisms × seeds × lrs from the learn grid, each config with its seed, lr and steps', () => {
    const s = planSweep(grid, '', 'sweep-1', new Date(2026, 10, 27, 14, 3));
    expect(s.name).toBe('recall 14:03');
    expect(s.settings.map((x) => [x.mechanism, x.seed, x.config.model.attention, x.config.train.seed, x.config.train.steps])).toEqual([
      ['nsa', 1, 'nsa', 1, 8],
      ['nsa', 2, 'nsa', 2, 8],
      ['dense', 1, 'dense', 1, 8],
      ['dense', 2, 'dense', 2, 8],
    ]);
    expect(s.settings.every((x) => x.state === 'pending' && x.libraryId === null)).toBe(true);
    expect(settingLabel(s, s.settings[1])).toBe('nsa · seed 2'); // one lr: not named
    expect(settingRunName(s, s.settings[2])).toBe('recall 14:03 · dense · seed 1');
    expect(sweepTag('a b')).toBe('sweep:a b');
    expect(sweepName(' lr, sweep  ')).toBe('lr sweep');
    expect(sweepName('x'.repeat(50))).toHaveLength(34);
  });

  it('resumes a started setting first, then the pending ones in order; -1 when all finished', () => {
    let s = planSweep(grid, 'g', 'sweep-1');
    expect(nextSetting(s)).toBe(0);
    s = withSetting(s, 0, { state: 'finished', libraryId: 'a' });
    s = withSetting(s, 2, { state: 'started', libraryId: 'c' });
    expect(nextSetting(s)).toBe(2);
    s = withSetting(s, 2, { state: 'finished' });
    expect(nextSetting(s)).toBe(1);
    for (const i of [1, 3]) s = withSetting(s, i, { state: 'finished' });
    expect(nextSetting(s)).toBe(-1);
  });

  it('reads the form into the grid, naming problems by the form labels', () => {
    const f = { ...defaultSweepForm('recall', ['nsa', 'dense']), seeds: '1, 2 3', lrs: '', steps: '8', target: '50' };
    const r = readSweepForm(f);
    expect(r.problems).toEqual([]);
    expect(r.settings).toBe(6);
    expect(r.grid).toMatchObject({ seeds: [1, 2, 3], lrs: undefined, steps: 8, target: 0.5 });
    expect(readSweepForm({ ...f, budget: '40' }).grid.budget).toBe(40);
    const bad = readSweepForm({ ...f, seeds: '1.5', mechanisms: [], target: '0' });
    expect(bad.settings).toBe(0);
    expect(bad.problems).toEqual([
      'Mechanisms: names no mechanism',
      'Seeds: must be integers in [0, 2^32) (got 1.5)',
      'Target accuracy: must be a percentage in (0, 100] (got 0)',
    ]);
  });
});

describe('sweep results', () => {
  const s = withSetting(planSweep(grid, 'g', 'sweep-1'), 0, { libraryId: 'a', state: 'finished' });
  const history = {
    metrics: [0, 1, 2, 3, 4, 5].map(step),
    evals: [
      { step: 2, valLoss: 2.5, accuracy: 0.3 },
      { step: 4, valLoss: 2.1, accuracy: 0.6 },
      { step: 6, valLoss: 2.2, accuracy: 0.55 },
    ],
  };

  it('best accuracy and val loss, steps, the step the target was reached at, and the time of its steps', () => {
    const r = settingResult(0, s.settings[0], 0.5, history);
    expect(r).toMatchObject({ bestAccuracy: 0.6, bestValLoss: 2.1, steps: 6, reachedAt: 4, seconds: 1.5 });
    expect(settingResult(1, s.settings[1], 0.5, null)).toMatchObject({ bestAccuracy: null, bestValLoss: null, steps: 0, reachedAt: null });
    expect(sweepResults(s, (id) => (id === 'a' ? history : null)).map((x) => x.steps)).toEqual([6, 0, 0, 0]);
  });

  it('sorts by a column, settings without values last, ties in grid order', () => {
    const rows = [
      settingResult(0, s.settings[0], 0.5, history),
      settingResult(1, s.settings[1], 0.5, null),
      settingResult(2, s.settings[2], 0.5, { metrics: [step(0)], evals: [{ step: 1, valLoss: 3, accuracy: 0.9 }] }),
    ];
    expect(sortResults(rows, { key: 'bestAccuracy', dir: 'desc' }).map((r) => r.index)).toEqual([2, 0, 1]);
    expect(sortResults(rows, { key: 'bestAccuracy', dir: 'asc' }).map((r) => r.index)).toEqual([0, 2, 1]);
    expect(sortResults(rows, { key: 'bestValLoss', dir: 'asc' }).map((r) => r.index)).toEqual([0, 2, 1]);
    expect(sortResults(rows, { key: 'steps', dir: 'asc' }).map((r) => r.index)).toEqual([2, 0, 1]);
    expect(sortResults(rows, { key: 'setting', dir: 'desc' }).map((r) => r.index)).toEqual([2, 1, 0]);
  });
});

describe('sweep figure and csv', () => {
  it("draws npm run learn's figure from the settings' evaluations, and writes the table as CSV", () => {
    let s = planSweep(grid, 'g', 'sweep-1');
    expect(sweepFigureSvg(s, () => null)).toBeNull();
    s = withSetting(withSetting(s, 0, { libraryId: 'a', state: 'finished' }), 2, { libraryId: 'c', state: 'started' });
    const h = (acc: number) => ({ metrics: [0, 1, 2, 3].map(step), evals: [{ step: 4, valLoss: 2, accuracy: acc }] });
    const histories: Record<string, ReturnType<typeof h>> = { a: h(0.75), c: h(0.25) };
    const svg = sweepFigureSvg(s, (id) => histories[id] ?? null)!;
    expect(svg.match(/<path /g)).toHaveLength(2);
    // An NSA setting whose evaluations carry the needle selected: its dotted line too.
    histories.a.evals[0] = { ...histories.a.evals[0], needleSelected: 0.5 } as (typeof histories.a.evals)[0];
    const withNeedle = sweepFigureSvg(s, (id) => histories[id] ?? null)!;
    expect(withNeedle.match(/<path /g)).toHaveLength(3);
    expect(withNeedle).toContain('>nsa · seed 1: needle selected</text>');
    expect(svg).toContain('>nsa · seed 1</text>');
    expect(svg).toContain('>dense · seed 1</text>');
    expect(svg).toContain('chance 6.3%');
    const csv = sweepCsv(
      s,
      sweepResults(s, (id) => histories[id] ?? null),
    )
      .trim()
      .split('\n');
    expect(csv).toHaveLength(5);
    expect(csv[1]).toBe('nsa,1,0.001,finished,0.75,2,4,8,4,1,a');
    expect(csv[2]).toBe('nsa,2,0.001,pending,,,0,8,,0,');
  });
});

describe('sweep storage', () => {
  it('survives a reload: the store reads back what it stored; a value that is not a sweep is set aside with a message', () => {
    const storage = memory();
    const store = createSweepStore(storage);
    expect(store.getState().sweep).toBeNull();
    const s = withSetting(planSweep(grid, 'g', 'sweep-1'), 0, { libraryId: 'a', state: 'started' });
    store.getState().setSweep(s);
    expect(loadSweep(storage)).toEqual(s);
    expect(createSweepStore(storage).getState().sweep).toEqual(s);
    saveSweep(null, storage);
    expect(storage.map.has(SWEEP_KEY)).toBe(false);

    storage.setItem(SWEEP_KEY, '{');
    expect(createSweepStore(storage).getState()).toMatchObject({ sweep: null, error: 'The stored sweep is not JSON; it was set aside.' });
    const broken = structuredClone(s);
    broken.settings[1].config.model.dim = -1;
    storage.setItem(SWEEP_KEY, JSON.stringify(broken));
    expect(() => loadSweep(storage)).toThrow(/settings\[1\]\.config\.model\.dim/);
    storage.setItem(SWEEP_KEY, JSON.stringify({ ...s, version: 2 }));
    expect(() => loadSweep(storage)).toThrow(/version 2/);
  });
});

describe('library tag filter', () => {
  const entry = (id: string, savedAt: string, tags?: string[]) => ({ id, savedAt, tags }) as LibraryEntry;
  const entries = [
    entry('a', '2026-11-27T10:00:00Z', ['baseline', 'sweep:old']),
    entry('b', '2026-11-27T11:00:00Z', ['sweep:new']),
    entry('c', '2026-11-27T12:00:00Z'),
    entry('d', '2026-11-27T09:00:00Z', ['baseline', 'sweep:new']),
  ];

  it('lists plain tags alphabetically and sweeps newest first, with their run counts', () => {
    expect(tagChoices(entries)).toEqual({
      tags: [{ tag: 'baseline', runs: 2 }],
      sweeps: [
        { tag: 'sweep:new', name: 'new', runs: 2 },
        { tag: 'sweep:old', name: 'old', runs: 1 },
      ],
    });
  });

  it('keeps the runs with the tag', () => {
    expect(filterByTag(entries, 'sweep:new').map((e) => e.id)).toEqual(['b', 'd']);
    expect(filterByTag(entries, null)).toHaveLength(4);
    expect(filterByTag(entries, 'nothing')).toEqual([]);
  });
});
