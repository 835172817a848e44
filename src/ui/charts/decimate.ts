// Keeps a long series drawable: at most `max` points, chosen so that every bucket's minimum and
// maximum survive (spikes stay visible, unlike taking every k-th point). The first and last
// points are always kept; order is preserved.

export interface Point {
  x: number;
  y: number;
}

export const MAX_CHART_POINTS = 1500;

export function decimateMinMax<P extends Point>(pts: readonly P[], max: number = MAX_CHART_POINTS): P[] {
  if (!(Number.isInteger(max) && max >= 4)) throw new RangeError(`max must be an integer ≥ 4 (got ${max})`);
  const n = pts.length;
  if (n <= max) return pts.slice();
  const inner = n - 2;
  const buckets = Math.floor((max - 2) / 2);
  const out: P[] = [pts[0]];
  for (let b = 0; b < buckets; b++) {
    const start = 1 + Math.floor((b * inner) / buckets);
    const end = 1 + Math.floor(((b + 1) * inner) / buckets);
    let lo = -1;
    let hi = -1;
    for (let i = start; i < end; i++) {
      const y = pts[i].y;
      if (!Number.isFinite(y)) continue;
      if (lo < 0 || y < pts[lo].y) lo = i;
      if (hi < 0 || y > pts[hi].y) hi = i;
    }
    if (lo < 0) continue;
    if (lo === hi) out.push(pts[lo]);
    else if (lo < hi) out.push(pts[lo], pts[hi]);
    else out.push(pts[hi], pts[lo]);
  }
  out.push(pts[n - 1]);
  return out;
}

/** Points worth drawing across `widthPx`: two per pixel column (a min and a max), at most MAX_CHART_POINTS. */
export function pointBudget(widthPx: number): number {
  return Math.max(64, Math.min(MAX_CHART_POINTS, 2 * Math.round(widthPx)));
}
