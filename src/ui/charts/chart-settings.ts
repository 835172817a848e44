// The charts' view settings — smoothing, log scale, x axis (step or wall-clock seconds) and zoom —
// kept in the URL's query (?smoothing=0.8&log=1&x=time&zoom=10-200), beside the config in the
// hash, so a link reopens the same view. Values that do not parse fall back to the defaults.
export type XAxisKind = 'step' | 'time';

export interface ChartSettings {
  smoothing: number;
  log: boolean;
  x: XAxisKind;
  /** Shown x range [from, to] in the x axis' units, or null for everything. */
  zoom: [number, number] | null;
}

export const DEFAULT_CHART_SETTINGS: ChartSettings = { smoothing: 0.6, log: false, x: 'step', zoom: null };

const KEYS = ['smoothing', 'log', 'x', 'zoom'] as const;

export function parseChartSettings(search: string): ChartSettings {
  const q = new URLSearchParams(search);
  const out = { ...DEFAULT_CHART_SETTINGS };
  const s = Number(q.get('smoothing'));
  if (q.has('smoothing') && Number.isFinite(s) && s >= 0 && s <= 0.99) out.smoothing = s;
  if (q.get('log') === '1') out.log = true;
  if (q.get('x') === 'time') out.x = 'time';
  const z = /^(-?[\d.]+(?:e[+-]?\d+)?)-(-?[\d.]+(?:e[+-]?\d+)?)$/i.exec(q.get('zoom') ?? '');
  if (z) {
    const [a, b] = [Number(z[1]), Number(z[2])];
    if (Number.isFinite(a) && Number.isFinite(b) && a < b) out.zoom = [a, b];
  }
  return out;
}

/** `search` with the chart settings replaced (defaults left out); other parameters kept. */
export function chartSettingsSearch(c: ChartSettings, search: string): string {
  const q = new URLSearchParams(search);
  for (const k of KEYS) q.delete(k);
  if (c.smoothing !== DEFAULT_CHART_SETTINGS.smoothing) q.set('smoothing', String(c.smoothing));
  if (c.log) q.set('log', '1');
  if (c.x !== 'step') q.set('x', c.x);
  if (c.zoom) q.set('zoom', `${c.zoom[0]}-${c.zoom[1]}`);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Writes the settings into the address bar (no history entry; the hash stays). */
export function writeChartSettings(c: ChartSettings): void {
  if (typeof history === 'undefined') return;
  const search = chartSettingsSearch(c, location.search);
  if (search !== location.search) history.replaceState(history.state, '', `${location.pathname}${search}${location.hash}`);
}
