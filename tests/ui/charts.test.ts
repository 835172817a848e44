// Chart helpers: TensorBoard's debiased EMA, min/max decimation, and the series built from metrics.
import { describe, expect, it } from 'vitest';
import { decimateMinMax, MAX_CHART_POINTS, pointBudget } from '../../src/ui/charts/decimate';
import { MAX_REFRESH_MS, MIN_REFRESH_MS, refreshInterval } from '../../src/ui/charts/throttle';
import { lossSeries, rateSeries } from '../../src/ui/charts/series';
import { debiasedEma } from '../../src/ui/charts/smoothing';
import type { StepMetrics } from '../../src/train/types';

describe('debiasedEma', () => {
  it('matches the TensorBoard formula (last = w·last + (1−w)·v, divided by 1 − wⁿ)', () => {
    const v = [4, 2, 3, 1];
    const w = 0.6;
    let last = 0;
    const want = v.map((x, i) => {
      last = w * last + (1 - w) * x;
      return last / (1 - w ** (i + 1));
    });
    const got = debiasedEma(v, w);
    for (let i = 0; i < v.length; i++) expect(got[i]).toBeCloseTo(want[i], 12);
    expect(got[0]).toBeCloseTo(4, 12); // debiased: the first point is the first value, not 0.4·4
  });

  it('weight 0 is the identity; a constant stays constant at any weight', () => {
    expect(debiasedEma([3, 1, 2], 0)).toEqual([3, 1, 2]);
    for (const x of debiasedEma(Array(50).fill(2.5), 0.99)) expect(x).toBeCloseTo(2.5, 10);
  });

  it('non-finite values pass through and do not enter the average', () => {
    const got = debiasedEma([1, NaN, 1, Infinity, 1], 0.5);
    expect(Number.isNaN(got[1])).toBe(true);
    expect(got[3]).toBe(Infinity);
    for (const i of [0, 2, 4]) expect(got[i]).toBeCloseTo(1, 12);
    expect(() => debiasedEma([1], 1)).toThrow(RangeError);
  });
});

describe('decimateMinMax', () => {
  const series = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => ({ x: i, y: f(i) }));

  it('returns short series unchanged', () => {
    const s = series(10, (i) => i);
    expect(decimateMinMax(s, 20)).toEqual(s);
  });

  it('keeps at most max points, in order, with the first and last, and every spike', () => {
    const spikes = new Set([1234, 5555, 9876]);
    const s = series(10_000, (i) => (spikes.has(i) ? 100 : i === 7777 ? -100 : Math.sin(i / 50)));
    const d = decimateMinMax(s);
    expect(d.length).toBeLessThanOrEqual(MAX_CHART_POINTS);
    expect(d.length).toBeGreaterThan(MAX_CHART_POINTS - 10);
    expect(d[0]).toBe(s[0]);
    expect(d.at(-1)).toBe(s.at(-1));
    for (let i = 1; i < d.length; i++) expect(d[i].x).toBeGreaterThan(d[i - 1].x);
    for (const i of [...spikes, 7777]) expect(d).toContain(s[i]);
    // Each bucket's extremes survive: the decimated range equals the full range.
    expect(Math.max(...d.map((p) => p.y))).toBe(100);
    expect(Math.min(...d.map((p) => p.y))).toBe(-100);
  });

  it('skips non-finite values and rejects a tiny max', () => {
    const s = series(100, (i) => (i % 3 === 0 ? NaN : i));
    const d = decimateMinMax(s, 10);
    expect(d.slice(1, -1).every((p) => Number.isFinite(p.y))).toBe(true);
    expect(() => decimateMinMax(s, 3)).toThrow(RangeError);
  });
});

describe('chart series', () => {
  const m = (step: number, nsa = false): StepMetrics => ({
    step, loss: 5 - step / 100, lr: 1e-3, gradNorm: 1, tokensPerSecond: 1000 + step, stepMs: 10, elapsedMs: step * 10,
    ...(nsa ? { nsa: { gateMean: [0.1, 0.2, 0.3] as [number, number, number], histogram: [], invalid: 0, perLayer: [] } } : {}),
  });

  it('a 10,000-step run: full series, each drawn with at most 1500 points at any chart width', () => {
    const metrics = Array.from({ length: 10_000 }, (_, i) => m(i, true));
    const evals = Array.from({ length: 200 }, (_, i) => ({ step: 50 * (i + 1), valLoss: 4 }));
    const l = lossSeries(metrics, evals, 0.9);
    const r = rateSeries(metrics);
    const all = [l.lossRaw, l.lossSmooth, l.val, r.tokensPerSecond, r.lr, r.gradNorm, ...r.gates];
    expect(all.map((s) => s.length)).toEqual([10_000, 10_000, 200, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000]);
    for (const width of [100, 280, 900, 4000]) for (const s of all) expect(decimateMinMax(s, pointBudget(width)).length).toBeLessThanOrEqual(Math.min(MAX_CHART_POINTS, pointBudget(width)));
    expect(l.val.map((p) => p.x).slice(0, 2)).toEqual([50, 100]); // at the step count: weights after n updates
  });

  it('point budget: two per pixel column, between 64 and 1500', () => {
    expect(pointBudget(300)).toBe(600);
    expect(pointBudget(10)).toBe(64);
    expect(pointBudget(5000)).toBe(MAX_CHART_POINTS);
  });

  it('chart refresh: 10 per second for short runs, slower as the drawn points grow, capped at 2 s', () => {
    expect(refreshInterval(0)).toBe(MIN_REFRESH_MS);
    expect(refreshInterval(50)).toBe(MIN_REFRESH_MS);
    expect(refreshInterval(500)).toBe(675);
    expect(refreshInterval(10_000)).toBe(refreshInterval(900));
    expect(refreshInterval(900)).toBeLessThanOrEqual(MAX_REFRESH_MS);
  });

  it('dense runs have no gate series', () => {
    expect(rateSeries([m(0), m(1)]).gates).toEqual([[], [], []]);
  });
});
