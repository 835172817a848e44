// Chart helpers: TensorBoard's debiased EMA, append-only min/max decimation, the incremental
// series built from metrics, redraw pacing and the one-redraw-per-slot queue; the evaluation the
// passkey's depth strip shows.
import { describe, expect, it } from 'vitest';

import type { EvalMetrics, StepMetrics } from '../../src/train/types';
import { MAX_CHART_POINTS, MAX_DRAWN_POINTS, MinMaxBuckets, type Point, pointBudget } from '../../src/ui/charts/decimate';
import { latestDepth } from '../../src/ui/charts/latest-depth';
import { DEFAULT_SHARE, LOSS_SHARE, MAX_REFRESH_MS, MIN_REFRESH_MS, nextCost, refreshInterval } from '../../src/ui/charts/pacing';
import { RedrawQueue } from '../../src/ui/charts/redraw-queue';
import { answerSeries, ChartSeries, MAX_ANSWER_LINES, type SeriesId } from '../../src/ui/charts/series';
import { DebiasedEma, debiasedEma } from '../../src/ui/charts/smoothing';

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
    expect(() => new DebiasedEma(-0.1)).toThrow(/smoothing weight must be in \[0, 1\)/);
  });
});

const series = (n: number, f: (i: number) => number): Point[] => Array.from({ length: n }, (_, i) => ({ x: i, y: f(i) }));
const fill = (pts: readonly Point[], max: number = MAX_CHART_POINTS) => {
  const b = new MinMaxBuckets(max);
  for (const p of pts) b.push(p);
  return b;
};
/** The reference: each aligned block of `width` points contributes its min and max. */
function blockExtremes(pts: readonly Point[], width: number): Point[] {
  const out: Point[] = [];
  for (let s = 0; s < pts.length; s += width) {
    const block = pts.slice(s, s + width).filter((p) => Number.isFinite(p.y));
    if (!block.length) continue;
    const lo = block.reduce((a, p) => (p.y < a.y ? p : a));
    const hi = block.reduce((a, p) => (p.y > a.y ? p : a));
    out.push(...(lo === hi ? [lo] : lo.x < hi.x ? [lo, hi] : [hi, lo]));
  }
  return out;
}

describe('MinMaxBuckets (append-only min/max decimation)', () => {
  it('keeps short series unchanged', () => {
    const s = series(10, (i) => i);
    expect(fill(s, 22).points()).toEqual(s);
  });

  it('keeps at most max points, in order, with the first and last, and every spike, at every length', () => {
    const spikes = new Set([1234, 5555, 9876]);
    const s = series(10_000, (i) => (spikes.has(i) ? 100 : i === 7777 ? -100 : Math.sin(i / 50)));
    const b = new MinMaxBuckets(MAX_CHART_POINTS);
    for (let n = 1; n <= s.length; n++) {
      b.push(s[n - 1]);
      if (n % 997 !== 0 && n !== s.length) continue;
      const d = b.points();
      expect(d.length).toBeLessThanOrEqual(MAX_CHART_POINTS);
      expect(d[0]).toBe(s[0]);
      expect(d.at(-1)).toBe(s[n - 1]);
      for (let i = 1; i < d.length; i++) expect(d[i].x).toBeGreaterThan(d[i - 1].x);
      for (const i of [...spikes, 7777]) if (i < n) expect(d).toContain(s[i]);
    }
    const d = b.points();
    expect(d.length).toBeGreaterThan(MAX_CHART_POINTS / 2); // at least half the budget is used
    expect(Math.max(...d.map((p) => p.y))).toBe(100);
    expect(Math.min(...d.map((p) => p.y))).toBe(-100);
  });

  it('equals the min and max of aligned power-of-two blocks (stable boundaries as the run grows)', () => {
    const s = series(5000, (i) => Math.sin(i * 1.7) + i / 1000);
    const b = fill(s, 102); // 50 buckets
    const width = 128; // 5000 / 64 > 50 buckets, 5000 / 128 ≤ 50
    const want = blockExtremes(s, width);
    const got = b.points();
    expect(got.slice(1, -1)).toEqual(want.filter((p) => p !== s[0] && p !== s.at(-1)));
    // Appending only changes the last bucket: every earlier drawn point stays.
    const before = got.slice(0, -3);
    b.push({ x: 5000, y: 0.5 });
    expect(b.points().slice(0, before.length)).toEqual(before);
  });

  it('narrower views merge aligned buckets, are cached until the next push, and stay within their size', () => {
    const s = series(3000, (i) => Math.cos(i / 7) * (i % 13));
    const b = fill(s);
    for (const n of [64, 100, 333, 600, 1499]) {
      const v = b.points(n);
      expect(v.length).toBeLessThanOrEqual(n);
      expect(v.length).toBeGreaterThan(n / 4);
      if (n < 700) expect(v.length).toBeGreaterThan(n / 2); // groups of ≥ 2 buckets: at least half the budget used
      expect(b.points(n)).toBe(v); // same array: memoised charts do not redraw
      expect(Math.max(...v.map((p) => p.y))).toBe(Math.max(...s.map((p) => p.y)));
    }
    const v = b.points(600);
    b.push({ x: 3000, y: 1 });
    expect(b.points(600)).not.toBe(v);
  });

  it('skips non-finite values inside, clears, and rejects a tiny budget', () => {
    const s = series(100, (i) => (i % 3 === 0 ? NaN : i));
    const d = fill(s, 10).points();
    expect(d.slice(1, -1).every((p) => Number.isFinite(p.y))).toBe(true);
    expect(() => new MinMaxBuckets(3)).toThrow(RangeError);
    expect(() => fill(s).points(2)).toThrow(/maxPoints must be an integer ≥ 4/);
    const b = fill(s);
    b.clear();
    expect(b.points()).toEqual([]);
    expect(b.length).toBe(0);
  });
});

describe('chart series (incremental)', () => {
  const m = (step: number, nsa = false): StepMetrics => ({
    step,
    loss: 5 - step / 100 + Math.sin(step),
    lr: 1e-3,
    gradNorm: 1 + (step % 7),
    tokensPerSecond: 1000 + step,
    stepMs: 10,
    elapsedMs: step * 10,
    ...(nsa
      ? {
          nsa: {
            gateMean: [0.1, 0.2, 0.3] as [number, number, number],
            histogram: [],
            invalid: 0,
            keysPerQuery: [9, 20.5 + (step % 3), 8] as [number, number, number],
            perLayer: [],
          },
        }
      : {}),
  });
  const ids: SeriesId[] = [
    'lossRaw',
    'lossSmooth',
    'val',
    'tokensPerSecond',
    'lr',
    'gradNorm',
    'gateCmp',
    'gateSel',
    'gateWin',
    'keysCmp',
    'keysSel',
    'keysWin',
    'keysTotal',
  ];
  const all = (c: ChartSeries) => Object.fromEntries(ids.map((id) => [id, c.get(id).points()]));

  it('a 10,000-step run streamed in 100 updates equals the same run built at once; each series ≤ 1500 points', () => {
    const metrics = Array.from({ length: 10_000 }, (_, i) => m(i, true));
    const evals: EvalMetrics[] = Array.from({ length: 200 }, (_, i) => ({ step: 50 * (i + 1), valLoss: 4 }));
    const live = new ChartSeries(0.9);
    let revision = live.revision;
    for (let n = 100; n <= 10_000; n += 100) {
      live.sync(metrics.slice(0, n), evals.slice(0, n / 50), 0.9);
      expect(live.revision).toBeGreaterThan(revision);
      revision = live.revision;
    }
    const once = new ChartSeries(0.9);
    once.sync(metrics, evals, 0.9);
    expect(all(live)).toEqual(all(once));
    for (const id of ids) expect(live.get(id).length).toBe(id === 'val' ? 200 : 10_000);
    for (const id of ids) expect(live.get(id).points().length).toBeLessThanOrEqual(MAX_CHART_POINTS);
    expect(
      live
        .get('val')
        .points()
        .map((p) => p.x)
        .slice(0, 2),
    ).toEqual([50, 100]); // at the step count: weights after n updates
    // The smoothed series is the debiased EMA of the loss.
    const smooth = debiasedEma(
      metrics.map((x) => x.loss),
      0.9,
    );
    const small = new ChartSeries(0.9);
    small.sync(metrics.slice(0, 500), [], 0.9);
    expect(
      small
        .get('lossSmooth')
        .points()
        .map((p) => p.y),
    ).toEqual(smooth.slice(0, 500));
  });

  it('the same inputs change nothing; a new smoothing weight re-smooths; a new run rebuilds', () => {
    const metrics = Array.from({ length: 300 }, (_, i) => m(i));
    const c = new ChartSeries(0.6);
    c.sync(metrics, [], 0.6);
    const r = c.revision;
    const raw = c.get('lossRaw').points();
    c.sync(metrics, [], 0.6);
    expect(c.revision).toBe(r);
    expect(c.get('lossRaw').points()).toBe(raw);

    c.sync(metrics, [], 0);
    expect(c.revision).toBeGreaterThan(r);
    expect(c.get('lossSmooth').points()).toEqual(c.get('lossRaw').points()); // no smoothing: the raw curve
    // Every smoothed series follows its raw one (the learning rate has none).
    for (const [smooth, raw] of [
      ['tokensSmooth', 'tokensPerSecond'],
      ['gradSmooth', 'gradNorm'],
      ['gateCmpSmooth', 'gateCmp'],
    ] as const)
      expect(c.get(smooth).points()).toEqual(c.get(raw).points());

    const next = Array.from({ length: 20 }, (_, i) => ({ ...m(i), loss: 1 }));
    c.sync(next, [], 0);
    expect(c.get('lossRaw').length).toBe(20);
    expect(
      c
        .get('lossRaw')
        .points()
        .every((p) => p.y === 1),
    ).toBe(true);
    c.sync([], [], 0);
    expect(c.get('lossRaw').length).toBe(0);
  });

  it('dense runs have no gate or key series', () => {
    const c = new ChartSeries(0.6);
    c.sync([m(0), m(1)], [], 0.6);
    expect([c.get('gateCmp').length, c.get('gateSel').length, c.get('gateWin').length]).toEqual([0, 0, 0]);
    expect(c.get('keysTotal').length).toBe(0);
  });

  it("NSA's keys read per query: each branch as counted, and their sum; a history without counts draws none", () => {
    const c = new ChartSeries(0.6);
    c.sync([m(0, true), m(1, true)], [], 0.6);
    expect(
      c
        .get('keysSel')
        .points()
        .map((p) => p.y),
    ).toEqual([20.5, 21.5]);
    expect(
      c
        .get('keysTotal')
        .points()
        .map((p) => p.y),
    ).toEqual([37.5, 38.5]);
    const old = { ...m(0, true), nsa: { ...m(0, true).nsa!, keysPerQuery: undefined } };
    const d = new ChartSeries(0.6);
    d.sync([old], [], 0.6);
    expect([d.get('gateCmp').length, d.get('keysTotal').length, d.get('keysCmp').length]).toEqual([1, 0, 0]);
  });

  it("a passkey's accuracy per digit: one series per answer, each evaluation's; a new run clears them", () => {
    const c = new ChartSeries(0.6);
    const evals = [
      { step: 1, valLoss: 3, accuracy: 0.25, accuracyByAnswer: [0.5, 0.25, 0, 0.25] },
      { step: 2, valLoss: 2.5, accuracy: 0.5 }, // an evaluation without them (none in a run): no points
      { step: 3, valLoss: 2, accuracy: 0.75, accuracyByAnswer: [1, 0.5, 0.75, 0.75] },
    ];
    c.sync([m(0), m(1), m(2)], evals, 0.6);
    const ys = (j: number) =>
      c
        .get(answerSeries(j))
        .points()
        .map((p) => [p.x, p.y]);
    expect([0, 1, 2, 3].map(ys)).toEqual([
      [
        [1, 0.5],
        [3, 1],
      ],
      [
        [1, 0.25],
        [3, 0.5],
      ],
      [
        [1, 0],
        [3, 0.75],
      ],
      [
        [1, 0.25],
        [3, 0.75],
      ],
    ]);
    expect(c.get(answerSeries(4)).length).toBe(0);
    // Answers past MAX_ANSWER_LINES (recall's 16–64 queries) are not kept.
    const many = new ChartSeries(0.6);
    many.sync([m(0)], [{ step: 1, valLoss: 3, accuracy: 0.5, accuracyByAnswer: Array.from({ length: 64 }, () => 0.5) }], 0.6);
    expect(Array.from({ length: MAX_ANSWER_LINES }, (_, j) => many.get(answerSeries(j)).length)).toEqual(Array(MAX_ANSWER_LINES).fill(1));
    c.sync([m(0)], [{ step: 1, valLoss: 3 }], 0.6); // another run
    expect(c.get(answerSeries(0)).length).toBe(0);
  });

  it('point budget: one per pixel column, between 64 and 600 (within the 1500 kept)', () => {
    expect(pointBudget(300)).toBe(300);
    expect(pointBudget(10)).toBe(64);
    expect(pointBudget(5000)).toBe(MAX_DRAWN_POINTS);
    expect(MAX_DRAWN_POINTS).toBeLessThanOrEqual(MAX_CHART_POINTS);
  });
});

describe('redraw pacing', () => {
  it('at most 4 redraws per second; a chart waits until its redraws fit its share of the main thread; capped at 5 s', () => {
    expect(MIN_REFRESH_MS).toBe(250);
    expect(refreshInterval(0)).toBe(MIN_REFRESH_MS);
    expect(refreshInterval(5)).toBe(MIN_REFRESH_MS);
    expect(refreshInterval(15)).toBe(Math.round(15 / DEFAULT_SHARE));
    expect(refreshInterval(40, LOSS_SHARE)).toBe(Math.round(40 / LOSS_SHARE));
    expect(refreshInterval(40, LOSS_SHARE)).toBeLessThan(refreshInterval(40));
    expect(refreshInterval(1000)).toBe(MAX_REFRESH_MS);
    expect(MAX_REFRESH_MS).toBe(5000);
    // The loss chart and six others (accuracy, tokens, lr, grad norm, gates, keys) take at most a
    // fifth of the main thread drawing.
    expect(LOSS_SHARE + 6 * DEFAULT_SHARE).toBeLessThanOrEqual(0.2 + 1e-12);
    expect(() => refreshInterval(10, 0)).toThrow(/share must be in \(0, 1\]/);
  });

  it('the cost estimate starts at the first redraw and follows the newer ones', () => {
    expect(nextCost(null, 40)).toBe(40);
    const c = nextCost(40, 10);
    expect(c).toBeLessThan(40);
    expect(c).toBeGreaterThan(10);
    let x = 40;
    for (let i = 0; i < 30; i++) x = nextCost(x, 10);
    expect(x).toBeCloseTo(10, 2);
  });

  it('the queue runs one redraw per slot, in request order; a waiting key keeps its place and takes the newest job', () => {
    const slots: Array<() => void> = [];
    const q = new RedrawQueue((run) => slots.push(run));
    const ran: string[] = [];
    q.request('a', () => ran.push('a1'));
    q.request('b', () => ran.push('b'));
    q.request('a', () => ran.push('a2'));
    q.request('c', () => ran.push('c'));
    q.cancel('c');
    expect(slots.length).toBe(1); // one slot at a time
    slots.shift()!();
    expect(ran).toEqual(['a2']);
    expect(slots.length).toBe(1);
    slots.shift()!();
    expect(ran).toEqual(['a2', 'b']);
    expect(slots.length).toBe(0);
    expect(q.waiting).toBe(0);
  });

  it('a failing redraw does not stop the queue', () => {
    const slots: Array<() => void> = [];
    const q = new RedrawQueue((run) => slots.push(run));
    const ran: string[] = [];
    q.request('a', () => {
      throw new Error('boom');
    });
    q.request('b', () => ran.push('b'));
    expect(() => slots.shift()!()).toThrow('boom');
    slots.shift()!();
    expect(ran).toEqual(['b']);
  });
});

describe('latestDepth (the passkey depth strip)', () => {
  const ranges = (right: number) => [
    { from: 20, to: 467, sequences: 4, keysRight: right },
    { from: 468, to: 914, sequences: 4, keysRight: 0 },
  ];
  it('shows the last evaluation that scored keys by depth; none without one', () => {
    const evals: EvalMetrics[] = [
      { step: 10, valLoss: 2, accuracy: 0.5, keysByDepth: ranges(1) },
      { step: 20, valLoss: 2, accuracy: 0.6, keysByDepth: ranges(3) },
      { step: 30, valLoss: 2, accuracy: 0.7 }, // an older history's row, say: skipped
    ];
    expect(latestDepth(evals)).toEqual({ step: 20, ranges: ranges(3) });
    expect(latestDepth(evals.slice(0, 1))).toEqual({ step: 10, ranges: ranges(1) });
    expect(latestDepth([{ step: 1, valLoss: 3 }])).toBeNull();
    expect(latestDepth([])).toBeNull();
  });
});
