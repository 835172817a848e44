// Heatmap geometry in CSS pixels: margins for the axes, the plot box, and the maps between query
// positions / blocks and pixels (used by drawing and by hit-testing the mouse).
export interface HeatmapLayout {
  width: number;
  height: number;
  plotX: number;
  plotY: number;
  plotW: number;
  plotH: number;
  T: number;
  nBlocks: number;
  lSel: number;
}

export const MARGIN = { left: 44, top: 26, right: 10, bottom: 10 } as const;
/** Pixels per query row when the plot is not height-capped. */
export const ROW_PX = 6;
export const MIN_PLOT_H = 160;
export const MAX_PLOT_H = 480;

export function heatmapLayout(width: number, T: number, nBlocks: number, lSel: number): HeatmapLayout {
  const plotW = Math.max(40, Math.floor(width) - MARGIN.left - MARGIN.right);
  const plotH = Math.min(MAX_PLOT_H, Math.max(MIN_PLOT_H, T * ROW_PX));
  return {
    width: plotW + MARGIN.left + MARGIN.right,
    height: plotH + MARGIN.top + MARGIN.bottom,
    plotX: MARGIN.left,
    plotY: MARGIN.top,
    plotW,
    plotH,
    T,
    nBlocks,
    lSel,
  };
}

/** x of the boundary before position p (p / lSel blocks from the left edge). */
export function posX(L: HeatmapLayout, p: number): number {
  return L.plotX + (p / L.lSel) * (L.plotW / Math.max(1, L.nBlocks));
}

/** x of the left edge of block j. */
export function blockX(L: HeatmapLayout, j: number): number {
  return L.plotX + j * (L.plotW / Math.max(1, L.nBlocks));
}

/** y of the top edge of query row t (t = T gives the bottom). */
export function rowY(L: HeatmapLayout, t: number): number {
  return L.plotY + (t / Math.max(1, L.T)) * L.plotH;
}

/** The cell under a point, or null outside the plot. */
export function hitCell(L: HeatmapLayout, x: number, y: number): { t: number; j: number } | null {
  if (L.T <= 0 || L.nBlocks <= 0) return null;
  const fx = (x - L.plotX) / L.plotW;
  const fy = (y - L.plotY) / L.plotH;
  if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return null;
  return { t: Math.floor(fy * L.T), j: Math.floor(fx * L.nBlocks) };
}

/** Tick values 0, s, 2s, … < n with s from 1·10^k, 2·10^k, 5·10^k so ticks are ≥ minGap px apart. */
export function ticks(n: number, spanPx: number, minGap: number): number[] {
  if (n <= 0) return [];
  const perUnit = spanPx / n;
  let step = 1;
  for (let k = 1; step * perUnit < minGap; k++) step = [1, 2, 5][k % 3] * 10 ** Math.floor(k / 3);
  const out: number[] = [];
  for (let v = 0; v < n; v += step) out.push(v);
  return out;
}
