// Chart ticks: round, distinct after formatting, inside the data range, and labels that fit the
// axis — the cases that overlapped ("8081" after "8000") or repeated (a flat loss curve).
import { describe, expect, it } from 'vitest';

import { axisTicks, labelPx, linearTicks, logTicks } from '../../src/ui/charts/ticks';

const plain = (v: number) => String(v);
const two = (v: number) => v.toFixed(2);

describe('chart ticks', () => {
  it('linear ticks are multiples of 1, 2 or 5 × 10^k inside the range, at most the count asked', () => {
    for (const [lo, hi, n] of [
      [0, 8081, 6],
      [3, 450534, 5],
      [4.61, 4.62, 5],
      [0.0001, 0.003, 4],
      [-2, 7, 3],
    ] as const) {
      const ts = linearTicks(lo, hi, n);
      expect(ts.length).toBeGreaterThanOrEqual(1);
      expect(ts.length).toBeLessThanOrEqual(n);
      for (const t of ts) expect(t >= lo - 1e-12 && t <= hi + 1e-12).toBe(true);
      if (ts.length > 1) {
        const step = ts[1] - ts[0];
        const m = step / 10 ** Math.floor(Math.log10(step));
        expect([1, 2, 5, 10].some((x) => Math.abs(m - x) < 1e-6)).toBe(true);
      }
    }
    expect(linearTicks(0, 8081, 6)).toEqual([0, 2000, 4000, 6000, 8000]);
    expect(linearTicks(0, 3, 6, true)).toEqual([0, 1, 2, 3]);
  });

  it('log ticks are powers of ten inside the range', () => {
    expect(logTicks(0.003, 20, 6)).toEqual([0.01, 0.1, 1, 10]);
    expect(logTicks(2, 5, 4)).toEqual(linearTicks(2, 5, 4));
  });

  it('axis ticks: labels never overlap and never repeat', () => {
    for (const width of [120, 300, 600, 1400]) {
      for (const [lo, hi] of [
        [0, 8081],
        [0, 450534],
        [1, 7],
      ] as const) {
        const ts = axisTicks(lo, hi, width, plain, { integer: true, horizontal: true });
        expect(ts.length * Math.max(...ts.map((t) => labelPx(plain(t))))).toBeLessThanOrEqual(Math.max(width, 2 * labelPx(plain(hi))));
        expect(new Set(ts).size).toBe(ts.length);
      }
    }
    // Ranges at the limit of float precision end (no round multiples exist there).
    expect(linearTicks(0.3, 0.30000000000000004, 3)).toEqual([0.3]);
    expect(axisTicks(3.5, 3.5 + 4e-16, 200, two)).toEqual([3.5]);
    // A nearly flat loss: the two-decimal labels stay distinct.
    const flat = axisTicks(4.6101, 4.6189, 200, two);
    expect(new Set(flat.map(two)).size).toBe(flat.length);
  });

  it('terminates with few ticks on any finite range (random magnitudes and widths)', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 3000; i++) {
      const lo = (rand() - 0.5) * 10 ** Math.floor(rand() * 20 - 10);
      const hi = lo + Math.abs(lo) * 10 ** -Math.floor(rand() * 18) * rand() + (rand() < 0.1 ? 0 : 1e-300);
      const ts = axisTicks(lo, hi, 40 + rand() * 400, two, { integer: rand() < 0.3, horizontal: rand() < 0.5 });
      expect(ts.length).toBeLessThanOrEqual(9);
    }
  });
});
