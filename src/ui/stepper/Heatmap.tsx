// Query × key-block heatmap on a canvas: cells from the raster (score, selected, forced), then the
// window band, the causal limit, the compressed frontier, the current row and the hovered cell.
// Clicking a row picks that query position.
import { useEffect, useMemo, useRef, useState } from 'react';

import { type SelectionSnapshot, snapshotBlocks, snapshotMechanism } from '../../definitions/selection-snapshot';
import { cmpFrontier, windowSpan } from './geometry';
import { blockX, type HeatmapLayout, heatmapLayout, hitCell, posX, rowY, ticks } from './heatmap-layout';
import { HeatmapTooltip } from './HeatmapTooltip';
import { css, type StepperPalette } from './palette';
import { forcedRuns, rasterize } from './raster';
import { useWidth } from './use-width';

interface Props {
  snapshot: SelectionSnapshot;
  t: number;
  onPick(t: number): void;
  palette: StepperPalette;
}

export function Heatmap({ snapshot: s, t, onPick, palette: p }: Props) {
  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const width = useWidth(wrap, 420);
  const nBlocks = snapshotBlocks(s);
  const L = useMemo(() => heatmapLayout(width, s.T, nBlocks, s.cfg.lSel), [width, s.T, nBlocks, s.cfg.lSel]);
  const raster = useMemo(() => rasterize(s, L.plotH, p), [s, L.plotH, p]);
  const runs = useMemo(() => forcedRuns(s), [s]);
  const [hover, setHover] = useState<{ t: number; j: number; x: number; y: number } | null>(null);

  const image = useMemo(() => {
    if (raster.width === 0 || raster.height === 0 || typeof document === 'undefined') return null;
    const c = document.createElement('canvas');
    c.width = raster.width;
    c.height = raster.height;
    c.getContext('2d')?.putImageData(new ImageData(raster.data as Uint8ClampedArray<ArrayBuffer>, raster.width, raster.height), 0, 0);
    return c;
  }, [raster]);

  useEffect(() => {
    const el = canvas.current;
    const ctx = el?.getContext('2d');
    if (!el || !ctx) return;
    const dpr = typeof devicePixelRatio === 'number' ? devicePixelRatio : 1;
    el.width = Math.round(L.width * dpr);
    el.height = Math.round(L.height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.width, L.height);
    if (image) {
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(image, L.plotX, L.plotY, L.plotW, L.plotH);
    }
    drawForcedHatch(ctx, L, runs, p);
    drawGrid(ctx, L, p);
    drawBands(ctx, L, s, p);
    drawAxes(ctx, L, p, t);
    drawCurrent(ctx, L, t, p);
    if (hover) {
      ctx.strokeStyle = css(p.marker);
      ctx.lineWidth = 1;
      ctx.setLineDash([]);
      const x0 = blockX(L, hover.j);
      ctx.strokeRect(
        x0 + 0.5,
        rowY(L, hover.t) + 0.5,
        blockX(L, hover.j + 1) - x0 - 1,
        Math.max(1, rowY(L, hover.t + 1) - rowY(L, hover.t) - 1),
      );
    }
  }, [L, image, runs, s, p, t, hover]);

  const locate = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    const cell = hitCell(L, x, y);
    return cell ? { ...cell, x, y } : null;
  };

  return (
    <div className="stepper-heatmap" ref={wrap}>
      <canvas
        ref={canvas}
        data-testid="stepper-heatmap"
        data-rows={s.T}
        data-blocks={nBlocks}
        style={{ width: L.width, height: L.height }}
        role="img"
        aria-label={`Selection heatmap: ${s.T} query positions by ${nBlocks} key blocks; row ${t} is current. Click a row to pick it.`}
        onMouseMove={(e) => setHover(locate(e))}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const c = locate(e);
          if (c) onPick(c.t);
        }}
      />
      {hover && <HeatmapTooltip snapshot={s} t={hover.t} j={hover.j} x={hover.x} y={hover.y} width={L.width} />}
    </div>
  );
}

/** Diagonal hatch over forced cells, one rectangle per vertical run of rows (any zoom level). */
function drawForcedHatch(ctx: CanvasRenderingContext2D, L: HeatmapLayout, runs: ReturnType<typeof forcedRuns>, p: StepperPalette): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.plotX, L.plotY, L.plotW, L.plotH);
  ctx.clip();
  ctx.strokeStyle = css(p.marker, 0.22);
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const run of runs) {
    const x0 = blockX(L, run.j);
    const x1 = blockX(L, run.j + 1);
    const y0 = rowY(L, run.t0);
    const y1 = rowY(L, run.t1);
    // Lines x + y = k on a global 7 px grid (hatches of adjacent runs line up), clipped to the run.
    for (let k = Math.ceil((x0 + y0) / 7) * 7; k <= x1 + y1; k += 7) {
      const xa = Math.max(x0, k - y1);
      const xb = Math.min(x1, k - y0);
      if (xb <= xa) continue;
      ctx.moveTo(xa, k - xa);
      ctx.lineTo(xb, k - xb);
    }
  }
  ctx.stroke();
  ctx.restore();
}

function drawGrid(ctx: CanvasRenderingContext2D, L: HeatmapLayout, p: StepperPalette): void {
  ctx.strokeStyle = css(p.grid);
  ctx.lineWidth = 1;
  ctx.setLineDash([]);
  ctx.beginPath();
  for (let j = 0; j <= L.nBlocks; j++) {
    const x = Math.round(blockX(L, j)) + 0.5;
    ctx.moveTo(x, L.plotY);
    ctx.lineTo(x, L.plotY + L.plotH);
  }
  ctx.moveTo(L.plotX, L.plotY + 0.5);
  ctx.lineTo(L.plotX + L.plotW, L.plotY + 0.5);
  ctx.moveTo(L.plotX, L.plotY + L.plotH - 0.5);
  ctx.lineTo(L.plotX + L.plotW, L.plotY + L.plotH - 0.5);
  ctx.stroke();
}

/** Staircase through (x(t), rows t) for the rows where x is defined. */
function staircase(ctx: CanvasRenderingContext2D, L: HeatmapLayout, x: (t: number) => number | null): void {
  let open = false;
  for (let t = 0; t < L.T; t++) {
    const xt = x(t);
    if (xt === null) {
      open = false;
      continue;
    }
    if (open) ctx.lineTo(xt, rowY(L, t));
    else ctx.moveTo(xt, rowY(L, t));
    ctx.lineTo(xt, rowY(L, t + 1));
    open = true;
  }
}

function drawBands(ctx: CanvasRenderingContext2D, L: HeatmapLayout, s: SelectionSnapshot, p: StepperPalette): void {
  const c = s.cfg;
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.plotX, L.plotY, L.plotW, L.plotH);
  ctx.clip();
  // NSA's window and compressed branches only: MoBA and DSA have neither (their cfg's w and l are placeholders).
  const nsa = snapshotMechanism(s) === 'nsa';
  // Window band [t − w + 1, t]: translucent fill, dashed left edge.
  if (nsa) drawWindow(ctx, L, c, p);
  // Causal limit: keys ≤ t.
  ctx.beginPath();
  staircase(ctx, L, (t) => posX(L, t + 1));
  ctx.strokeStyle = css(p.causal);
  ctx.lineWidth = 1;
  ctx.setLineDash([]);
  ctx.stroke();
  // Compressed frontier: positions < f(t) + 1 are covered by visible compressed blocks.
  if (!nsa) {
    ctx.restore();
    return;
  }
  ctx.beginPath();
  staircase(ctx, L, (t) => {
    const f = cmpFrontier(t, c);
    return f < 0 ? null : posX(L, f + 1);
  });
  ctx.strokeStyle = css(p.frontier);
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.restore();
}

function drawWindow(ctx: CanvasRenderingContext2D, L: HeatmapLayout, c: SelectionSnapshot['cfg'], p: StepperPalette): void {
  ctx.beginPath();
  for (let t = 0; t < L.T; t++) {
    const { lo } = windowSpan(t, c);
    const y0 = rowY(L, t);
    const x0 = posX(L, lo);
    ctx.rect(x0, y0, posX(L, t + 1) - x0, rowY(L, t + 1) - y0);
  }
  ctx.fillStyle = css(p.window, 0.14);
  ctx.fill();
  ctx.beginPath();
  staircase(ctx, L, (t) => posX(L, windowSpan(t, c).lo));
  ctx.strokeStyle = css(p.window);
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 3]);
  ctx.stroke();
}

function drawAxes(ctx: CanvasRenderingContext2D, L: HeatmapLayout, p: StepperPalette, current: number): void {
  ctx.fillStyle = css(p.text);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'alphabetic';
  ctx.textAlign = 'center';
  const colW = L.plotW / Math.max(1, L.nBlocks);
  for (const j of ticks(L.nBlocks, L.plotW, 22)) ctx.fillText(String(j), blockX(L, j) + colW / 2, L.plotY - 8);
  // Corner label: rows are query positions t, columns key blocks j.
  ctx.textAlign = 'right';
  ctx.fillText('t \\ j', L.plotX - 6, L.plotY - 8);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const rowH = L.plotH / Math.max(1, L.T);
  for (const v of ticks(L.T, L.plotH, 20)) {
    if (Math.abs(v - current) * rowH < 12) continue;
    ctx.fillText(String(v), L.plotX - 12, rowY(L, v) + rowH / 2);
  }
}

function drawCurrent(ctx: CanvasRenderingContext2D, L: HeatmapLayout, t: number, p: StepperPalette): void {
  if (L.T <= 0) return;
  const y0 = rowY(L, t);
  const h = Math.max(2, rowY(L, t + 1) - y0);
  ctx.setLineDash([]);
  ctx.strokeStyle = css(p.marker);
  ctx.lineWidth = 1.5;
  ctx.strokeRect(L.plotX - 0.5, y0 - 1, L.plotW + 1, h + 2);
  // Pointer and label in the left margin.
  const ym = y0 + h / 2;
  ctx.fillStyle = css(p.marker);
  ctx.beginPath();
  ctx.moveTo(L.plotX - 2, ym);
  ctx.lineTo(L.plotX - 9, ym - 5);
  ctx.lineTo(L.plotX - 9, ym + 5);
  ctx.closePath();
  ctx.fill();
  ctx.font = 'bold 11px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.fillText(String(t), L.plotX - 12, ym);
}
