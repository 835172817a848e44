// The diagram of one query: a token axis, the compressed blocks it sees (overlapping ones on
// separate lanes), the selection blocks by role and the window, scaled to the sequence length.
// Drawn at the width of its box (one SVG unit per CSS pixel, so its labels keep their size in a
// narrow column), with its legend in HTML beneath, where it wraps.
import type { NsaConfig } from '../../definitions/nsa-config';
import { useBox } from '../charts/use-box';
import type { ExplainBlock, ExplainDiagram } from './diagram';

/** Width before the box is measured. */
const FALLBACK_W = 360;
const LEFT = 92;
const LANE = 9;
const ROW_GAP = 10;

function Bar({
  b,
  y,
  h,
  x,
  className,
  title,
}: {
  b: ExplainBlock;
  y: number;
  h: number;
  x: (i: number) => number;
  className: string;
  title: string;
}) {
  return (
    <rect className={className} x={x(b.start)} y={y} width={Math.max(1, x(b.end) - x(b.start) - 0.5)} height={h}>
      <title>{title}</title>
    </rect>
  );
}

export function ExplainSvg({ diagram: d, nsa }: { diagram: ExplainDiagram; nsa: NsaConfig }) {
  const [ref, measured] = useBox<HTMLDivElement>(FALLBACK_W);
  const W = Math.max(200, measured);
  const x = (i: number) => LEFT + ((W - LEFT - 8) * i) / d.T;
  const lanes = Math.min(4, Math.max(1, Math.ceil(nsa.l / nsa.d)));
  const yAxis = 14;
  const yCmp = yAxis + 16;
  const ySel = yCmp + lanes * LANE + ROW_GAP;
  const yWin = ySel + 16 + ROW_GAP;
  const H = yWin + 14 + 6;
  const label = (y: number, text: string) => (
    <text x={4} y={y} className="explain-label">
      {text}
    </text>
  );
  return (
    <div ref={ref} className="explain-figure">
      <svg
        className="explain-svg"
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Keys read by query t = ${d.t}`}
        data-testid="explain-svg"
      >
        {label(yAxis + 4, `tokens 0…${d.T - 1}`)}
        <line className="explain-axis" x1={x(0)} x2={x(d.T)} y1={yAxis} y2={yAxis} />
        <line className="explain-query" x1={x(d.t + 0.5)} x2={x(d.t + 0.5)} y1={yAxis - 8} y2={yWin + 14} />
        <text className="explain-label" x={Math.min(x(d.t + 0.5) + 3, W - 40)} y={yAxis - 2}>
          t
        </text>
        {label(yCmp + 6, `compressed ${d.cmp.length}`)}
        {d.cmp.map((b, k) => (
          <Bar
            key={k}
            b={b}
            x={x}
            y={yCmp + (k % lanes) * LANE}
            h={LANE - 2}
            className="explain-cmp"
            title={`compressed block ${k}: tokens ${b.start}…${b.end - 1}`}
          />
        ))}
        {label(ySel + 11, `selection ${d.sel.length}`)}
        {d.sel.map((b) => (
          <Bar
            key={b.index}
            b={b}
            x={x}
            y={ySel}
            h={14}
            className={`explain-sel explain-sel-${b.role}`}
            title={`selection block ${b.index}: tokens ${b.start}…${b.end - 1} — ${b.role === 'forced' ? 'forced' : b.role === 'example' ? 'picked by score (example)' : 'candidate, not picked'}`}
          />
        ))}
        {label(yWin + 11, `window ${d.window.end - d.window.start}`)}
        <Bar b={d.window} x={x} y={yWin} h={14} className="explain-win" title={`window: tokens ${d.window.start}…${d.window.end - 1}`} />
      </svg>
      <ul className="explain-legend" aria-label="Legend">
        <li>
          <span className="explain-swatch explain-sel-forced" /> forced
        </li>
        <li>
          <span className="explain-swatch explain-sel-example" /> picked by score (e.g.)
        </li>
        <li>
          <span className="explain-swatch explain-swatch-candidate" /> candidate, not read
        </li>
        <li>
          <span className="explain-swatch explain-win" /> window
        </li>
      </ul>
    </div>
  );
}
