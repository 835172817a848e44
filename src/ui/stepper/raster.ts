// The heatmap's pixels: one column per selection block, one row per bin of query positions, each
// pixel the area average of its rows' cell colours (a decimated view stays honest: a block
// selected by half the rows of a bin shows at half strength). Pure, so Node tests check it.
import { forcedBlocks, numSelCandidates } from '../../definitions/nsa-blocks';
import { rowRecorded, scoreRow, selectionRow, type SelectionSnapshot, snapshotBlocks } from '../../definitions/selection-snapshot';
import { rowBins } from './geometry';
import { type Rgb, scoreColour, type StepperPalette } from './palette';

export interface Raster {
  width: number;
  height: number;
  /** RGBA, row-major, opaque. */
  data: Uint8ClampedArray;
  /** Bin starts (height + 1 entries): display row r shows query rows [bins[r], bins[r+1]). */
  bins: number[];
}

const FUTURE = 0;
const CANDIDATE = 1;
const SELECTED = 2;
const FORCED = 3;

/**
 * Cell kinds of query t over nBlocks blocks. A selected block that is not a candidate (an invalid
 * selection) still shows as selected, in the future region, so the bug is visible. An unrecorded
 * row is all FUTURE-coloured.
 */
export function rowKinds(s: SelectionSnapshot, t: number, nBlocks: number, out: Uint8Array): Uint8Array {
  if (!rowRecorded(s, t)) return out.fill(FUTURE);
  const nb = Math.min(nBlocks, numSelCandidates(t, s.cfg));
  out.fill(CANDIDATE, 0, nb).fill(FUTURE, nb, nBlocks);
  for (const j of selectionRow(s, t)) if (j >= 0 && j < nBlocks) out[j] = SELECTED;
  for (const j of forcedBlocks(t, s.cfg)) if (j < nBlocks && out[j] === SELECTED) out[j] = FORCED;
  return out;
}

export const CELL = { FUTURE, CANDIDATE, SELECTED, FORCED } as const;

/** Rasterizes a snapshot into at most maxRows display rows. */
export function rasterize(s: SelectionSnapshot, maxRows: number, p: StepperPalette): Raster {
  const nBlocks = snapshotBlocks(s);
  const bins = rowBins(s.T, maxRows);
  const R = bins.length - 1;
  const data = new Uint8ClampedArray(nBlocks * R * 4);
  const acc = new Float64Array(nBlocks * 3);
  const kinds = new Uint8Array(nBlocks);
  const hpg = s.H / s.G;
  const solid: Record<number, Rgb> = { [FUTURE]: p.future, [SELECTED]: p.selected, [FORCED]: p.forced };
  for (let r = 0; r < R; r++) {
    acc.fill(0);
    const t0 = bins[r];
    const t1 = bins[r + 1];
    for (let t = t0; t < t1; t++) {
      rowKinds(s, t, nBlocks, kinds);
      const sc = scoreRow(s, t);
      for (let j = 0; j < nBlocks; j++) {
        const c = kinds[j] === CANDIDATE ? scoreColour(p, sc ? sc[j] / hpg : 0) : solid[kinds[j]];
        acc[j * 3] += c[0];
        acc[j * 3 + 1] += c[1];
        acc[j * 3 + 2] += c[2];
      }
    }
    const n = t1 - t0;
    for (let j = 0; j < nBlocks; j++) {
      const o = (r * nBlocks + j) * 4;
      data[o] = Math.round(acc[j * 3] / n);
      data[o + 1] = Math.round(acc[j * 3 + 1] / n);
      data[o + 2] = Math.round(acc[j * 3 + 2] / n);
      data[o + 3] = 255;
    }
  }
  return { width: nBlocks, height: R, data, bins };
}

/** Maximal vertical runs of rows [t0, t1) in which block j is selected and forced. */
export function forcedRuns(s: SelectionSnapshot): Array<{ j: number; t0: number; t1: number }> {
  const nBlocks = snapshotBlocks(s);
  const kinds = new Uint8Array(nBlocks);
  const open = new Int32Array(nBlocks).fill(-1);
  const out: Array<{ j: number; t0: number; t1: number }> = [];
  for (let t = 0; t <= s.T; t++) {
    if (t < s.T) rowKinds(s, t, nBlocks, kinds);
    for (let j = 0; j < nBlocks; j++) {
      const on = t < s.T && kinds[j] === FORCED;
      if (on && open[j] < 0) open[j] = t;
      else if (!on && open[j] >= 0) {
        out.push({ j, t0: open[j], t1: t });
        open[j] = -1;
      }
    }
  }
  return out;
}
