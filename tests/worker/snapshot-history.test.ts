// SnapshotHistory: bounded, thinned evenly over the run, the newest always kept.
import { describe, expect, it } from 'vitest';

import { MAX_SNAPSHOTS, snapshotCapacity, SnapshotHistory } from '../../src/worker/snapshot-history';

describe('SnapshotHistory', () => {
  it('keeps everything until full, then doubles the stride; the newest is always kept', () => {
    const h = new SnapshotHistory<{ step: number }>(4);
    for (const step of [0, 4, 8, 12]) h.add({ step });
    expect(h.steps).toEqual([0, 4, 8, 12]);
    h.add({ step: 16 }); // 5 > 4: stride 2 keeps offers 0, 2, 4
    expect(h.steps).toEqual([0, 8, 16]);
    h.add({ step: 20 }); // offer 5: off the stride, kept as the newest
    expect(h.steps).toEqual([0, 8, 16, 20]);
    h.add({ step: 24 }); // offer 6 replaces it
    expect(h.steps).toEqual([0, 8, 16, 24]);
    h.add({ step: 28 }); // offer 7: 5 items → stride 4 keeps 0, 4 and the newest
    expect(h.steps).toEqual([0, 16, 28]);
    expect(h.at(16)).toEqual({ step: 16 });
    expect(h.at(8)).toBeNull();
  });

  it('never exceeds its capacity and spans the run over 10,000 snapshots', () => {
    const h = new SnapshotHistory<{ step: number }>(100);
    for (let s = 0; s < 10_000; s++) {
      h.add({ step: s });
      expect(h.size).toBeLessThanOrEqual(100);
    }
    expect(h.steps[0]).toBe(0);
    expect(h.steps.at(-1)).toBe(9999);
    expect(h.size).toBeGreaterThanOrEqual(50);
    // Evenly spread: gaps between kept steps (except the newest) are all equal.
    const gaps = new Set(h.steps.slice(1, -1).map((s, i) => s - h.steps[i]));
    expect(gaps.size).toBe(1);
  });

  it('refuses steps that do not increase and bad capacities', () => {
    const h = new SnapshotHistory<{ step: number }>(2);
    h.add({ step: 3 });
    expect(() => h.add({ step: 3 })).toThrow(/must increase/);
    expect(() => new SnapshotHistory(1)).toThrow(RangeError);
    h.clear();
    expect(h.size).toBe(0);
  });

  it('capacity follows the byte budget, within [2, MAX_SNAPSHOTS]', () => {
    expect(snapshotCapacity(1000, 10_000)).toBe(10);
    expect(snapshotCapacity(1, 1e9)).toBe(MAX_SNAPSHOTS);
    expect(snapshotCapacity(1e9, 1000)).toBe(2);
    expect(() => snapshotCapacity(0)).toThrow(RangeError);
  });
});
