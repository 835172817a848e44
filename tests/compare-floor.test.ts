// The cancellation floor of the attention gradient checks (tests/helpers/compare.ts) cannot hide a
// wrong kernel: with one key per query (w = 1) dQ is exactly 0 in float64, and rounding noise of the
// cancelled terms passes while an error of the terms' own size fails.
import { describe, expect, it } from 'vitest';

import { attentionGradFloor, randn, relRms, rng } from './helpers/compare';

describe('attentionGradFloor', () => {
  const rows = 40;
  const dk = 8;
  const dv = 6;
  const r = rng(11);
  const dout = randn(rows * dv, r);
  const v = randn(rows * dv, r);
  const k = randn(rows * dk, r);
  const scale = 1 / Math.sqrt(dk);
  const floor = attentionGradFloor(scale, dout, v, rows, k, rows);
  const zero = new Float64Array(rows * dk);
  // Per element, a term of dQ is scale · (dO·v) · k: its typical size.
  const termSize = (scale * Math.sqrt(dv) * Math.sqrt(dk)) / Math.sqrt(dk);

  it('passes float32 rounding noise of the cancelled terms (a few ulp of them)', () => {
    const noise = randn(rows * dk, rng(12), 8 * 2 ** -24 * termSize);
    expect(relRms(noise, zero, floor)).toBeLessThan(1e-4);
  });

  it('fails an error of the terms’ own size (a wrong kernel), even at 1 % of it', () => {
    const wrong = randn(rows * dk, rng(13), 0.01 * termSize);
    expect(relRms(wrong, zero, floor)).toBeGreaterThan(1e-2);
  });

  it('is 0 without keys and leaves an ordinary reference to its own norm', () => {
    expect(attentionGradFloor(scale, dout, v, 0, k, 0)).toBe(0);
    const ref = randn(rows * dk, rng(14), termSize);
    const near = ref.map((x, i) => x * (1 + 1e-6 * (i % 3)));
    expect(relRms(near, ref, floor)).toBeCloseTo(relRms(near, ref), 12);
  });
});
