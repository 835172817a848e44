// A chart as a file: SVG (recharts' drawing with the computed styles inlined, so it renders the
// same outside the page), PNG (that SVG rasterised at 2×) and CSV (the points of the lines shown).
import type { Point } from './decimate';

/** Style properties that decide how the chart's SVG elements look. */
const STYLE_PROPS = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-opacity',
  'stroke-dasharray',
  'opacity',
  'font-family',
  'font-size',
  'font-weight',
  'text-anchor',
  'dominant-baseline',
];

/** Standalone SVG markup of `svg` with its computed styles inlined and a background. */
export function svgMarkup(svg: SVGSVGElement, background: string): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const src = [svg, ...svg.querySelectorAll('*')];
  const dst = [copy, ...copy.querySelectorAll('*')];
  src.forEach((el, i) => {
    const cs = getComputedStyle(el);
    const style = STYLE_PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';');
    (dst[i] as SVGElement).setAttribute('style', style);
  });
  const { width, height } = svg.getBoundingClientRect();
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  copy.setAttribute('width', String(Math.round(width)));
  copy.setAttribute('height', String(Math.round(height)));
  const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', background);
  copy.insertBefore(bg, copy.firstChild);
  return new XMLSerializer().serializeToString(copy);
}

/** PNG bytes of SVG markup at `scale` × its size. */
export async function svgToPng(markup: string, width: number, height: number, scale = 2): Promise<Uint8Array<ArrayBuffer>> {
  const url = URL.createObjectURL(new Blob([markup], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas to draw the PNG');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, width, height);
    const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
    if (!blob) throw new Error('the canvas could not encode a PNG');
    return new Uint8Array(await blob.arrayBuffer());
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** CSV of the lines shown: `series,x,y` rows in each line's order (full precision). */
export function chartCsv(xName: string, lines: ReadonlyArray<{ name: string; points: readonly Point[] }>): string {
  const quote = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const rows = [`series,${xName},value`];
  for (const l of lines) for (const p of l.points) rows.push(`${quote(l.name)},${p.x},${p.y}`);
  return rows.join('\n') + '\n';
}
