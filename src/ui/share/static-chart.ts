// A chart as standalone SVG text (pure; no React, no DOM): the standalone result page draws its loss
// and accuracy charts with it, so they open in any browser without the app. Lines with a legend,
// round ticks, an optional fixed y range, a labelled reference line and a shaded band (chance and its
// sampling error). Each line carries its points as data attributes (data-series, data-points,
// data-values "x:y …"), so a reader or a test can take the numbers back.
import type { Point } from '../charts/decimate';
import { linearTicks } from '../charts/ticks';

export interface StaticLine {
  id: string;
  name: string;
  color: string;
  points: readonly Point[];
  /** Thin and faint (raw values behind a smoothed line). */
  faint?: boolean;
  /** Dots at each point (sparse series: evaluations). */
  dots?: boolean;
}

export interface StaticChart {
  testId: string;
  title: string;
  xName: string;
  lines: readonly StaticLine[];
  format(v: number): string;
  yRange?: readonly [number, number];
  reference?: { y: number; label: string } | null;
  band?: { y0: number; y1: number; label: string } | null;
}

const W = 640;
const H = 280;
const M = { l: 56, r: 16, t: 40, b: 40 };

export const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const px = (v: number) => Number(v.toFixed(1));

/** The chart's SVG element (its own viewBox; scales to its container's width). */
export function staticChartSvg(c: StaticChart): string {
  const pts = c.lines.flatMap((l) => l.points);
  const xs = pts.map((p) => p.x);
  const ys = pts.map((p) => p.y).filter(Number.isFinite);
  const x0 = Math.min(0, ...xs);
  const x1 = Math.max(1, ...xs);
  let [y0, y1] = c.yRange ?? [Math.min(...ys, c.reference?.y ?? Infinity), Math.max(...ys, c.reference?.y ?? -Infinity)];
  if (!Number.isFinite(y0) || !Number.isFinite(y1)) [y0, y1] = [0, 1];
  if (y1 - y0 < 1e-9) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const x = (v: number) => px(M.l + (pw * (v - x0)) / (x1 - x0));
  const y = (v: number) => px(M.t + ph * (1 - (Math.min(y1, Math.max(y0, v)) - y0) / (y1 - y0)));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-testid="${c.testId}" data-points="${c.lines.reduce((a, l) => a + l.points.length, 0)}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeXml(c.title)}" font-family="system-ui, sans-serif" font-size="12">`,
    `<text x="${M.l}" y="16" font-weight="600" fill="currentColor">${escapeXml(c.title)}</text>`,
  ];
  for (const v of linearTicks(y0, y1, 5))
    out.push(
      `<line x1="${M.l}" x2="${M.l + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#8884" />`,
      `<text x="${M.l - 6}" y="${y(v) + 4}" text-anchor="end" fill="currentColor">${escapeXml(c.format(v))}</text>`,
    );
  for (const v of linearTicks(x0, x1, 6, true))
    out.push(`<text x="${x(v)}" y="${M.t + ph + 16}" text-anchor="middle" fill="currentColor">${v}</text>`);
  out.push(
    `<text x="${M.l + pw / 2}" y="${H - 6}" text-anchor="middle" fill="currentColor">${escapeXml(c.xName)}</text>`,
    `<rect x="${M.l}" y="${M.t}" width="${pw}" height="${ph}" fill="none" stroke="#8886" />`,
  );
  if (c.band)
    out.push(
      `<rect class="band" data-band="${c.band.y0},${c.band.y1}" x="${M.l}" y="${y(c.band.y1)}" width="${pw}" height="${px(y(c.band.y0) - y(c.band.y1))}" fill="#9ca3af" fill-opacity="0.25"><title>${escapeXml(c.band.label)}</title></rect>`,
      `<text x="${M.l + 4}" y="${y(c.band.y1) + 12}" fill="currentColor" font-size="11">${escapeXml(c.band.label)}</text>`,
    );
  if (c.reference)
    out.push(
      `<line class="reference" data-reference="${c.reference.y}" x1="${M.l}" x2="${M.l + pw}" y1="${y(c.reference.y)}" y2="${y(c.reference.y)}" stroke="currentColor" stroke-dasharray="4 4" />`,
      `<text x="${M.l + pw - 4}" y="${y(c.reference.y) - 4}" text-anchor="end" fill="currentColor">${escapeXml(c.reference.label)}</text>`,
    );
  let legendX = M.l;
  for (const l of c.lines) {
    const values = l.points.map((p) => `${p.x}:${p.y}`).join(' ');
    const d = l.points.map((p, i) => `${i ? 'L' : 'M'}${x(p.x)},${y(p.y)}`).join('');
    out.push(
      `<g class="series series-${l.id}" data-series="${l.id}" data-name="${escapeXml(l.name)}" data-points="${l.points.length}" data-values="${values}">`,
      l.points.length > 1
        ? `<path d="${d}" fill="none" stroke="${l.color}" stroke-width="${l.faint ? 1 : 2}"${l.faint ? ' stroke-opacity="0.35"' : ''} />`
        : '',
      ...(l.dots || l.points.length === 1
        ? l.points.map(
            (p) =>
              `<circle cx="${x(p.x)}" cy="${y(p.y)}" r="3" fill="${l.color}"><title>${p.x}: ${escapeXml(c.format(p.y))}</title></circle>`,
          )
        : []),
      '</g>',
      `<line x1="${legendX}" x2="${legendX + 16}" y1="30" y2="30" stroke="${l.color}" stroke-width="2"${l.faint ? ' stroke-opacity="0.35"' : ''} />`,
      `<text x="${legendX + 20}" y="34" fill="currentColor">${escapeXml(l.name)}</text>`,
    );
    legendX += 32 + 7 * l.name.length;
  }
  out.push('</svg>');
  return out.filter(Boolean).join('\n');
}
