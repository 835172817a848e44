// Heatmap pixels: each cell's colour from its kind and score, area-averaged when rows are binned;
// forced runs match the cell kinds; unrecorded rows draw as non-candidates.
import { describe, expect, it } from 'vitest';

import { snapshotBlocks } from '../../src/definitions/selection-snapshot';
import { cellKind } from '../../src/ui/stepper/geometry';
import { DARK, LIGHT, scoreColour, type StepperPalette } from '../../src/ui/stepper/palette';
import { CELL, forcedRuns, rasterize, rowKinds } from '../../src/ui/stepper/raster';
import { CASES } from '../nsa/helpers';
import { refSnapshots } from './stepper-fixtures';

function expectedColour(p: StepperPalette, kind: string, score: number, hpg: number): number[] {
  const c = kind === 'future' ? p.future : kind === 'selected' ? p.selected : kind === 'forced' ? p.forced : scoreColour(p, score / hpg);
  return [...c];
}

describe('rasterize', () => {
  const { c, shape } = CASES[0]; // T = 37, nSel = 3, lSel = 8: 5 blocks
  const [s] = refSnapshots(shape, c, 11).snaps;
  const nb = snapshotBlocks(s);
  const hpg = shape.H / shape.G;

  it.each([
    ['light', LIGHT],
    ['dark', DARK],
  ] as const)('one row per query (%s): every pixel is its cell colour', (_n, p) => {
    const r = rasterize(s, 480, p);
    expect([r.width, r.height]).toEqual([nb, s.T]);
    for (let t = 0; t < s.T; t++) {
      const row = s.sel.subarray(t * c.nSel, (t + 1) * c.nSel);
      for (let j = 0; j < nb; j++) {
        const want = expectedColour(p, cellKind(t, j, row, c), s.scores![t * nb + j], hpg).map(Math.round);
        const o = (t * nb + j) * 4;
        expect([...r.data.subarray(o, o + 4)], `t=${t} j=${j}`).toEqual([...want, 255]);
      }
    }
  });

  it('binned rows average their cells (7 display rows for 37 queries)', () => {
    const r = rasterize(s, 7, LIGHT);
    expect(r.height).toBe(7);
    for (let b = 0; b < 7; b++) {
      for (let j = 0; j < nb; j++) {
        const acc = [0, 0, 0];
        for (let t = r.bins[b]; t < r.bins[b + 1]; t++) {
          const col = expectedColour(LIGHT, cellKind(t, j, s.sel.subarray(t * c.nSel, (t + 1) * c.nSel), c), s.scores![t * nb + j], hpg);
          for (let k = 0; k < 3; k++) acc[k] += col[k];
        }
        const n = r.bins[b + 1] - r.bins[b];
        const o = (b * nb + j) * 4;
        for (let k = 0; k < 3; k++) expect(r.data[o + k]).toBe(Math.round(acc[k] / n));
      }
    }
  });

  it('score shading rises with P and is monotone', () => {
    let prev = scoreColour(LIGHT, 0);
    for (const f of [0.01, 0.1, 0.3, 0.7, 1, 2]) {
      const cur = scoreColour(LIGHT, f);
      // Light ramp darkens: each channel non-increasing.
      for (let k = 0; k < 3; k++) expect(cur[k]).toBeLessThanOrEqual(prev[k]);
      prev = cur;
    }
    expect(scoreColour(LIGHT, Number.NaN)).toEqual([...LIGHT.candidateLow]);
  });

  it('forced runs are the maximal vertical runs of forced cells', () => {
    const kinds = new Uint8Array(nb);
    const grid: number[][] = Array.from({ length: s.T }, (_, t) => [...rowKinds(s, t, nb, kinds)]);
    const runs = forcedRuns(s);
    const painted = new Set<string>();
    for (const run of runs) {
      expect(run.t1).toBeGreaterThan(run.t0);
      for (let t = run.t0; t < run.t1; t++) painted.add(`${t}/${run.j}`);
      if (run.t0 > 0) expect(grid[run.t0 - 1][run.j]).not.toBe(CELL.FORCED);
      if (run.t1 < s.T) expect(grid[run.t1][run.j]).not.toBe(CELL.FORCED);
    }
    let forced = 0;
    grid.forEach((row, t) =>
      row.forEach((k, j) => {
        if (k === CELL.FORCED) forced++;
        expect(painted.has(`${t}/${j}`)).toBe(k === CELL.FORCED);
      }),
    );
    expect(forced).toBeGreaterThan(s.T); // block 0 and the local block on every row
  });

  it('an unrecorded row is drawn as non-candidates; an invalid selected block still shows', () => {
    const recorded = new Uint8Array(s.T).fill(1);
    recorded[5] = 0;
    const sel = s.sel.slice();
    sel.set([0, 3, 4], 30 * c.nSel); // t = 30 has 4 candidates: block 4 is invalid
    const r = rasterize({ ...s, sel, recorded }, 480, LIGHT);
    for (let j = 0; j < nb; j++) expect([...r.data.subarray((5 * nb + j) * 4, (5 * nb + j) * 4 + 3)]).toEqual([...LIGHT.future]);
    expect([...r.data.subarray((30 * nb + 4) * 4, (30 * nb + 4) * 4 + 3)]).toEqual([...LIGHT.selected]);
  });
});
