// Axis ticks computed here rather than by recharts: round values (1, 2, 5 × 10^k steps; powers of
// ten on a log axis), distinct (recharts keys ticks by value: a repeated tick was a duplicate
// React key and a label left behind), and few enough that labels of the given format never
// overlap at the axis' length.

/** Pixels a label of `text` takes on an axis: ~7 px per character at the chart's 12 px font, plus a gap. */
export function labelPx(text: string): number {
  return 7 * text.length + 16;
}

/** Round steps 1, 2, 5 × 10^k, ascending from at least `minStep`. */
function niceStep(minStep: number): number {
  const p = 10 ** Math.floor(Math.log10(minStep));
  for (const m of [1, 2, 5, 10]) if (m * p >= minStep * (1 - 1e-12)) return m * p;
  return 10 * p;
}

/** Multiples of a round step inside [lo, hi], at most `maxTicks` of them (≥ 2 when lo < hi). */
export function linearTicks(lo: number, hi: number, maxTicks: number, integer = false): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return [];
  // A range at the limit of float precision (e.g. 0.3 … 0.30000000000000004) has no round steps:
  // the multiples k·step would need k beyond 2^53 (k++ stops changing k).
  if (hi - lo <= Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9) return [lo];
  const n = Math.max(2, Math.floor(maxTicks));
  let step = niceStep((hi - lo) / n);
  for (;;) {
    if (integer) step = Math.max(1, Math.round(step));
    const out: number[] = [];
    for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && out.length <= n; k++)
      out.push(Number((k * step).toPrecision(12)));
    if (out.length <= n) return out;
    step = niceStep(step * 1.5); // the next round step
  }
}

/** Powers of ten inside [lo, hi] (lo > 0); with fewer than two, the linear ticks instead. */
export function logTicks(lo: number, hi: number, maxTicks: number): number[] {
  if (!(lo > 0 && hi >= lo)) return [];
  const out: number[] = [];
  for (let e = Math.ceil(Math.log10(lo) - 1e-9); 10 ** e <= hi * (1 + 1e-9); e++) out.push(Number((10 ** e).toPrecision(12)));
  if (out.length < 2) return linearTicks(lo, hi, maxTicks);
  const every = Math.ceil(out.length / Math.max(2, maxTicks));
  return out.filter((_, i) => i % every === 0);
}

/**
 * Ticks for an axis of `lengthPx` whose labels are format(tick): as many as fit with their
 * labels apart (`horizontal`: label widths; vertical: 20 px rows), distinct after formatting.
 */
export function axisTicks(
  lo: number,
  hi: number,
  lengthPx: number,
  format: (v: number) => string,
  o: { log?: boolean; integer?: boolean; horizontal?: boolean } = {},
): number[] {
  const per = (ts: number[]) => (o.horizontal ? Math.max(...ts.map((t) => labelPx(format(t))), 1) : 20);
  let max = Math.max(2, Math.min(8, Math.floor(lengthPx / (o.horizontal ? labelPx(format(hi)) : 20))));
  for (;;) {
    const ts = o.log ? logTicks(lo, hi, max) : linearTicks(lo, hi, max, o.integer);
    const labels = ts.map(format);
    const distinct = new Set(labels).size === labels.length;
    if ((distinct && ts.length * per(ts) <= lengthPx) || max <= 2)
      return distinct ? ts : ts.filter((_, i) => labels.indexOf(labels[i]) === i);
    max--;
  }
}
