// The comparison view's data: overlaid curves per run (distinct colours, one smoothing for all,
// gates only for NSA runs), the config diff of the same runs (src/train/compare.ts), and the
// "same config, other attention" counterpart.
import { describe, expect, it } from 'vitest';

import { compareRuns, FIGURE_COLUMNS, figureCells } from '../../src/train/compare';
import type { RunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { StepMetrics } from '../../src/train/types';
import { accuracyKeysPoints } from '../../src/ui/compare/accuracy-keys';
import { type ComparedCurves, compareLines, RUN_COLORS } from '../../src/ui/compare/compare-series';
import { meanKeyReads } from '../../src/ui/config/derived';
import { counterpartConfig, counterpartLabel, windowOnlyConfig } from '../../src/ui/library/counterpart';

const step = (s: number, loss: number, gates?: [number, number, number]): StepMetrics => ({
  step: s,
  loss,
  lr: 1e-3,
  gradNorm: 1,
  tokensPerSecond: 1000 + s,
  stepMs: 1,
  elapsedMs: s,
  ...(gates ? { nsa: { gateMean: gates, histogram: [], invalid: 0, perLayer: [] } } : {}),
});

const dense: ComparedCurves = {
  id: 'a',
  name: 'dense run',
  metrics: [step(0, 5), step(1, 3), step(2, 4)],
  evals: [{ step: 3, valLoss: 4.2 }],
};
const nsa: ComparedCurves = {
  id: 'b',
  name: 'nsa run',
  metrics: [step(0, 6, [0.5, 0.25, 0.125]), step(1, 2, [0.4, 0.3, 0.2])],
  evals: [
    { step: 1, valLoss: 4 },
    { step: 2, valLoss: 3.5 },
  ],
};

const ys = (l: { series: { points(): Array<{ x: number; y: number }> } }) => l.series.points().map((p) => p.y);

describe('compare lines', () => {
  it('one line per run on each chart, named after the run, in distinct colours; gates only for the NSA run (one line per branch)', () => {
    const l = compareLines([dense, nsa], 0);
    for (const chart of [l.loss, l.val, l.tokens]) {
      expect(chart.map((x) => x.name)).toEqual(['dense run', 'nsa run']);
      expect(chart.map((x) => x.color)).toEqual([RUN_COLORS[0], RUN_COLORS[1]]);
    }
    expect(new Set(RUN_COLORS).size).toBe(RUN_COLORS.length);
    expect(new Set(l.loss.map((x) => x.id)).size).toBe(2);
    expect(l.gates.map((x) => x.name)).toEqual(['nsa run · cmp', 'nsa run · sel', 'nsa run · win']);
    expect(l.gates.every((x) => x.color === RUN_COLORS[1])).toBe(true);
    expect(new Set(l.gates.map((x) => x.dash)).size).toBe(3); // told apart by the dash pattern
    expect(ys(l.gates[2])).toEqual([0.125, 0.2]);
    expect(l.val[1].series.points()).toEqual([
      { x: 1, y: 4 },
      { x: 2, y: 3.5 },
    ]);
  });

  it('smoothing 0 draws the raw values; one weight smooths every per-step curve (debiased EMA), never the validation loss', () => {
    expect(ys(compareLines([dense], 0).loss[0])).toEqual([5, 3, 4]);
    const l = compareLines([dense, nsa], 0.5);
    const ema = (xs: number[], w: number) => {
      let m = 0;
      return xs.map((x, i) => ((m = m * w + (1 - w) * x), m / (1 - w ** (i + 1))));
    };
    expect(ys(l.loss[0])).toEqual(ema([5, 3, 4], 0.5));
    expect(ys(l.loss[1])).toEqual(ema([6, 2], 0.5));
    expect(ys(l.tokens[0])).toEqual(ema([1000, 1001, 1002], 0.5));
    expect(ys(l.gates[0])).toEqual(ema([0.5, 0.4], 0.5));
    expect(ys(l.val[0])).toEqual([4.2]);
  });

  it('colours repeat only past the palette', () => {
    const many = Array.from({ length: RUN_COLORS.length + 1 }, (_, i) => ({ ...dense, id: String(i), name: `r${i}` }));
    const colors = compareLines(many, 0).loss.map((x) => x.color);
    expect(new Set(colors.slice(0, RUN_COLORS.length)).size).toBe(RUN_COLORS.length);
    expect(colors.at(-1)).toBe(RUN_COLORS[0]);
  });
});

describe('config diff and counterpart', () => {
  it('window only: the same NSA config with every gate but the window forced to 0; none for dense or an already window-only run', () => {
    const n = preset('tiny');
    const w = windowOnlyConfig(n)!;
    expect(w.model.nsa!.gates).toEqual({ kind: 'force', branch: 'win' });
    expect({ ...w, model: { ...w.model, nsa: { ...w.model.nsa!, gates: n.model.nsa!.gates } } }).toEqual(n);
    expect(n.model.nsa!.gates).toEqual({ kind: 'none' }); // a copy
    expect(windowOnlyConfig(w)).toBeNull();
    expect(windowOnlyConfig({ ...n, model: { ...n.model, attention: 'dense' } })).toBeNull();
  });

  it('the counterpart of a dense run is the same config with NSA, and back; the diff lists only model.attention', () => {
    const d = preset('tiny');
    d.model.attention = 'dense';
    const n = counterpartConfig(d);
    expect(n.model.attention).toBe('nsa');
    expect(counterpartLabel(d)).toBe('Same config, NSA');
    expect(counterpartLabel(n)).toBe('Same config, dense attention');
    expect(counterpartConfig(n)).toEqual(d);
    expect(d.model.attention).toBe('dense'); // a copy
    const c = compareRuns([
      { name: 'a', config: d, metrics: dense.metrics, evals: dense.evals },
      { name: 'b', config: n, metrics: nsa.metrics, evals: nsa.evals },
    ]);
    expect(c.differences).toEqual([{ path: 'model.attention', values: ['dense', 'nsa'] }]);
    expect(FIGURE_COLUMNS).toHaveLength(figureCells(c.runs[0]).length);
    expect(figureCells(c.runs[1])).toEqual(['b', 'nsa', '2', '2.0000', '2.0000 @1', '3.5000', '3.5000 @2', '1001', '0.400/0.300/0.200']);
  });

  it('a dense config without NSA settings gets its closest preset’s', () => {
    const d = preset('tiny');
    d.model.attention = 'dense';
    delete d.model.nsa;
    expect(counterpartConfig(d).model.nsa).toEqual(preset('tiny').model.nsa);
  });
});

describe('task runs in the comparison', () => {
  const recall = preset('tiny');
  recall.data = {
    source: 'recall',
    tokenizer: 'byte',
    recall: { keys: 16, values: 16, fillers: 1, pairs: 10, queries: 8, minDistance: 20, minStart: 8 },
  };
  const denseRecall = structuredClone(recall);
  denseRecall.model.attention = 'dense';
  const evals = (acc: number) => [
    { step: 10, valLoss: 3, accuracy: acc / 2 },
    { step: 20, valLoss: 2, accuracy: acc },
  ];

  it('overlays the answer accuracy of the runs that have one', () => {
    const lines = compareLines(
      [
        { ...dense, evals: evals(0.5) },
        { ...nsa, evals: [{ step: 1, valLoss: 4 }] },
      ],
      0,
    );
    expect(lines.accuracy).toHaveLength(1);
    expect(ys(lines.accuracy[0])).toEqual([0.25, 0.5]);
  });

  it('plots accuracy against keys read per query only when the runs differ in mechanism or budget', () => {
    const runs = [
      { name: 'nsa', config: recall, evals: evals(0.3) },
      { name: 'dense', config: denseRecall, evals: evals(0.2) },
    ];
    const points = accuracyKeysPoints(runs);
    expect(points.map((p) => [p.name, p.accuracy])).toEqual([
      ['nsa', 0.3],
      ['dense', 0.2],
    ]);
    expect(points[1].keys).toBe((64 + 1) / 2); // dense: t + 1 averaged over t < 64
    expect(points[0].keys).toBeCloseTo(meanKeyReads(64, recall.model.nsa!).total, 9);
    expect(points[0].chance).toBe(1 / 16);
    expect(accuracyKeysPoints([runs[0], { ...runs[0], name: 'twin' }])).toEqual([]); // same budget: nothing to plot
    // The window, MoBA and DSA at T = 64: keys counted query by query here.
    const { nsa: _n, ...base } = recall.model;
    const mech = (name: string, model: object) => ({
      name,
      config: { ...recall, model: { ...base, ...model } } as RunConfig,
      evals: evals(0.1),
    });
    const more = accuracyKeysPoints([
      mech('window', { attention: 'window', window: { w: 16 } }),
      mech('moba', { attention: 'moba', moba: { blockSize: 8, topK: 3 } }),
      mech('moba wider', { attention: 'moba', moba: { blockSize: 8, topK: 4 } }),
    ]);
    const mean = (f: (t: number) => number) => Array.from({ length: 64 }, (_, t) => f(t)).reduce((a, b) => a + b) / 64;
    expect(more.map((p) => p.keys)).toEqual([
      mean((t) => Math.min(16, t + 1)),
      // its own block's positions ≤ t, and up to 2 (3) complete earlier blocks of 8
      mean((t) => (t % 8) + 1 + 8 * Math.min(2, Math.floor(t / 8))),
      mean((t) => (t % 8) + 1 + 8 * Math.min(3, Math.floor(t / 8))),
    ]);
    expect(accuracyKeysPoints([runs[0], { name: 'text', config: preset('tiny'), evals: [{ step: 1, valLoss: 3 }] }])).toEqual([]);
  });
});
