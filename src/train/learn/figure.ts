// The learning figure of `npm run learn`: held-out answer accuracy against training step, one line
// per grid point (coloured by mechanism), chance marked, and for a sparse mechanism its needle
// selected dotted in the same colour (the share of answers whose source its selection read:
// src/train/eval/needle-read.ts), as a standalone SVG (browser-safe, no dependencies; the CLI also
// renders it to PNG).

export interface LearnCurve {
  /** Legend label: mechanism, and seed / lr when the grid has several. */
  label: string;
  mechanism: string;
  points: ReadonlyArray<{ step: number; accuracy: number }>;
  /** NSA, MoBA, DSA: per evaluation, the share of answers whose source the selection read (drawn dotted). */
  needle?: ReadonlyArray<{ step: number; share: number }>;
}

const COLORS: Record<string, string> = { nsa: '#1f77b4', dense: '#2ca02c', window: '#d62728' };
const EXTRA = ['#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The SVG text: y from 0 to 100 %, x from 0 to the longest run, chance as a dashed line. */
export function learnFigureSvg(o: { title: string; curves: readonly LearnCurve[]; chance: number; steps: number }): string {
  const [W, H] = [720, 420];
  const m = { l: 60, r: 170, t: 40, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const xMax = Math.max(1, o.steps, ...o.curves.flatMap((c) => c.points.map((p) => p.step)));
  const x = (step: number) => m.l + (pw * step) / xMax;
  const y = (acc: number) => m.t + ph * (1 - Math.min(1, Math.max(0, acc)));
  const mechanisms = [...new Set(o.curves.map((c) => c.mechanism))];
  const color = (mech: string) => COLORS[mech] ?? EXTRA[mechanisms.indexOf(mech) % EXTRA.length];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.l}" y="22" font-size="14" font-weight="bold">${esc(o.title)}</text>`,
  ];
  for (let i = 0; i <= 10; i++) {
    const v = i / 10;
    parts.push(
      `<line x1="${m.l}" x2="${m.l + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`,
      `<text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end">${i * 10}%</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const s = Math.round((xMax * i) / 5);
    parts.push(`<text x="${x(s)}" y="${m.t + ph + 18}" text-anchor="middle">${s}</text>`);
  }
  parts.push(
    `<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + ph}" stroke="black"/>`,
    `<line x1="${m.l}" x2="${m.l + pw}" y1="${m.t + ph}" y2="${m.t + ph}" stroke="black"/>`,
    `<text x="${m.l + pw / 2}" y="${H - 12}" text-anchor="middle">training step</text>`,
    `<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">held-out answer accuracy</text>`,
    `<line x1="${m.l}" x2="${m.l + pw}" y1="${y(o.chance)}" y2="${y(o.chance)}" stroke="black" stroke-dasharray="4 4"/>`,
    `<text x="${m.l + pw - 4}" y="${y(o.chance) - 4}" text-anchor="end">chance ${(100 * o.chance).toFixed(1)}%</text>`,
  );
  const path = (pts: ReadonlyArray<{ step: number; v: number }>) =>
    [...pts]
      .sort((a, b) => a.step - b.step)
      .map((p, j) => `${j ? 'L' : 'M'}${x(p.step).toFixed(1)},${y(p.v).toFixed(1)}`)
      .join(' ');
  const legend: Array<{ label: string; stroke: string; dash: string }> = [];
  for (const c of o.curves) {
    const stroke = color(c.mechanism);
    if (c.points.length)
      parts.push(
        `<path d="${path(c.points.map((p) => ({ step: p.step, v: p.accuracy })))}" fill="none" stroke="${stroke}" stroke-width="2"/>`,
      );
    legend.push({ label: c.label, stroke, dash: '' });
    if (c.needle?.length) {
      parts.push(
        `<path d="${path(c.needle.map((p) => ({ step: p.step, v: p.share })))}" fill="none" stroke="${stroke}" stroke-width="1.5" stroke-dasharray="2 3"/>`,
      );
      legend.push({ label: `${c.label}: needle selected`, stroke, dash: ' stroke-dasharray="2 3"' });
    }
  }
  legend.forEach((l, i) => {
    const ly = m.t + 10 + 18 * i;
    parts.push(
      `<line x1="${m.l + pw + 12}" x2="${m.l + pw + 32}" y1="${ly}" y2="${ly}" stroke="${l.stroke}" stroke-width="2"${l.dash}/>`,
      `<text x="${m.l + pw + 38}" y="${ly + 4}">${esc(l.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
