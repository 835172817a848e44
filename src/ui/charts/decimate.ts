// Keeps a long series drawable: append-only min/max decimation. Point i belongs to bucket
// floor(i / width), width a power of two; each bucket keeps its lowest and highest point, so spikes
// survive (unlike taking every k-th point). When the buckets would exceed their budget, neighbours
// merge pairwise and the width doubles. Appending costs O(1) amortised (no pass over the history
// per update), and bucket boundaries sit at fixed step indices, so the drawn curve does not
// shimmer as the run grows: only its last bucket changes between updates. Views for narrower
// charts merge k buckets at a time (still aligned), cached per size.
export interface Point {
  x: number;
  y: number;
}

/** The most points a series keeps: the finest resolution a chart can draw it at. */
export const MAX_CHART_POINTS = 1500;
/**
 * The most points a chart draws per series. Recharts' cost grows with the points drawn (a slow
 * machine: ~0.04 ms each per redraw); 600 min/max points show a 10,000-step curve's envelope.
 */
export const MAX_DRAWN_POINTS = 600;

/** Points drawn across a chart `widthPx` wide: one per pixel column, 64 to MAX_DRAWN_POINTS. */
export function pointBudget(widthPx: number): number {
  return Math.max(64, Math.min(MAX_DRAWN_POINTS, Math.round(widthPx)));
}

interface Bucket<P extends Point> {
  lo: P | null;
  hi: P | null;
}

function mergeInto<P extends Point>(into: Bucket<P>, b: Bucket<P>): void {
  if (b.lo && (!into.lo || b.lo.y < into.lo.y)) into.lo = b.lo;
  if (b.hi && (!into.hi || b.hi.y > into.hi.y)) into.hi = b.hi;
}

/** A bucket's extremes in x order (one point when the same). */
function pushExtremes<P extends Point>(out: P[], b: Bucket<P>): void {
  if (!b.lo || !b.hi) return;
  if (b.lo === b.hi) out.push(b.lo);
  else if (b.lo.x <= b.hi.x) out.push(b.lo, b.hi);
  else out.push(b.hi, b.lo);
}

export class MinMaxBuckets<P extends Point = Point> {
  /** Points per bucket (a power of two). */
  private width = 1;
  /** Points in the last bucket. */
  private fill = 0;
  private buckets: Bucket<P>[] = [];
  private first: P | null = null;
  private last: P | null = null;
  private count = 0;
  private version = 0;
  private readonly maxBuckets: number;
  private readonly views = new Map<number, { version: number; points: P[] }>();

  /** At most `maxPoints` (≥ 4) points: the first, the last and two per bucket. */
  constructor(readonly maxPoints: number) {
    if (!(Number.isInteger(maxPoints) && maxPoints >= 4)) throw new RangeError(`maxPoints must be an integer ≥ 4 (got ${maxPoints})`);
    this.maxBuckets = Math.floor((maxPoints - 2) / 2);
  }

  /** Points appended so far. */
  get length(): number {
    return this.count;
  }

  /** Appends a point (x ascending). A non-finite y is kept only as the first or last point. */
  push(p: P): void {
    if (this.fill === this.width || this.buckets.length === 0) {
      if (this.buckets.length === this.maxBuckets) this.halve();
      if (this.fill === this.width || this.buckets.length === 0) {
        this.buckets.push({ lo: null, hi: null });
        this.fill = 0;
      }
    }
    if (Number.isFinite(p.y)) mergeInto(this.buckets[this.buckets.length - 1], { lo: p, hi: p });
    this.fill++;
    this.first ??= p;
    this.last = p;
    this.count++;
    this.version++;
  }

  clear(): void {
    this.width = 1;
    this.fill = 0;
    this.buckets = [];
    this.first = null;
    this.last = null;
    this.count = 0;
    this.version++;
  }

  /**
   * The decimated series with at most `maxPoints` points (default: this structure's budget; a
   * smaller one merges k buckets per drawn bucket). The same array until the next push.
   */
  points(maxPoints: number = this.maxPoints): P[] {
    if (!(Number.isInteger(maxPoints) && maxPoints >= 4)) throw new RangeError(`maxPoints must be an integer ≥ 4 (got ${maxPoints})`);
    const cached = this.views.get(maxPoints);
    if (cached && cached.version === this.version) return cached.points;
    const points = this.build(Math.floor((Math.min(maxPoints, this.maxPoints) - 2) / 2));
    if (this.views.size >= 8) this.views.clear(); // widths seen while resizing: keep a few
    this.views.set(maxPoints, { version: this.version, points });
    return points;
  }

  private build(maxBuckets: number): P[] {
    // Groups of `group` buckets, aligned to index 0: stable while the run grows, and at least
    // (group − 1) / group of the budget used.
    const group = Math.max(1, Math.ceil(this.buckets.length / maxBuckets));
    const out: P[] = [];
    if (this.first) out.push(this.first);
    for (let i = 0; i < this.buckets.length; i += group) {
      const b: Bucket<P> = { lo: null, hi: null };
      for (let j = i; j < Math.min(i + group, this.buckets.length); j++) mergeInto(b, this.buckets[j]);
      const before = out.length;
      pushExtremes(out, b);
      // The first point may also be the first bucket's extreme: keep it once.
      if (before === 1 && out.length > 1 && out[1] === out[0]) out.splice(1, 1);
    }
    if (this.last && out[out.length - 1] !== this.last) out.push(this.last);
    return out;
  }

  /** Merges neighbouring buckets pairwise; the width doubles (alignment to index 0 is kept). */
  private halve(): void {
    const merged: Bucket<P>[] = [];
    for (let i = 0; i < this.buckets.length; i += 2) {
      const b = { ...this.buckets[i] };
      if (i + 1 < this.buckets.length) mergeInto(b, this.buckets[i + 1]);
      merged.push(b);
    }
    // An odd count leaves the old last bucket (full) as the first half of a new, wider one.
    this.fill = this.buckets.length % 2 === 1 ? this.width : 2 * this.width;
    this.width *= 2;
    this.buckets = merged;
  }
}
