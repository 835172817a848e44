// Key to the heatmap's colours and lines.
import type { SnapshotMechanism } from '../../definitions/selection-snapshot';
import { css, scoreColour, type StepperPalette } from './palette';

function Swatch({ fill, hatch, stroke }: { fill: string; hatch?: string; stroke?: string }) {
  return (
    <svg width="18" height="12" aria-hidden="true" className="legend-swatch">
      <rect x="0.5" y="0.5" width="17" height="11" fill={fill} stroke={stroke ?? 'none'} />
      {hatch && <path d="M-2 10 L6 2 M4 12 L14 2 M10 12 L18 4" stroke={hatch} strokeWidth="1" />}
    </svg>
  );
}

function LineSwatch({ colour, dash, width = 2 }: { colour: string; dash?: string; width?: number }) {
  return (
    <svg width="18" height="12" aria-hidden="true" className="legend-swatch">
      <path d="M9 0 V12" stroke={colour} strokeWidth={width} strokeDasharray={dash} />
    </svg>
  );
}

/** The entries a mechanism's heatmap uses: MoBA and DSA have no window branch or compressed keys of their own. */
export function Legend({ palette: p, mechanism = 'nsa' }: { palette: StepperPalette; mechanism?: SnapshotMechanism }) {
  const nsa = mechanism === 'nsa';
  const ramp = `linear-gradient(to right, ${css(scoreColour(p, 0))}, ${css(scoreColour(p, 1))})`;
  return (
    <ul className="stepper-legend" data-testid="stepper-legend" aria-label="Heatmap legend">
      <li>
        <Swatch fill={css(p.selected)} /> selected
      </li>
      <li>
        <Swatch fill={css(p.forced)} hatch={css(p.marker, 0.35)} />{' '}
        {mechanism === 'moba' ? 'own block (always read)' : 'forced (block 0 / local)'}
      </li>
      <li>
        <span className="legend-ramp" style={{ background: ramp }} aria-hidden="true" /> candidate, shade ={' '}
        {mechanism === 'dsa' ? 'index score I' : 'P'}
      </li>
      <li>
        <Swatch fill={css(p.future)} stroke={css(p.grid)} /> after t (not a candidate)
      </li>
      {nsa && (
        <>
          <li>
            <Swatch fill={css(p.window, 0.25)} /> window [t−w+1, t]
          </li>
          <li>
            <LineSwatch colour={css(p.window)} dash="3 2" width={1.5} /> window start
          </li>
        </>
      )}
      <li>
        <LineSwatch colour={css(p.causal)} width={1} /> causal limit t+1
      </li>
      {nsa && (
        <li>
          <LineSwatch colour={css(p.frontier)} /> compressed frontier
        </li>
      )}
    </ul>
  );
}
