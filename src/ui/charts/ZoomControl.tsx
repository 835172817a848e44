// Zoom of every chart to an x range: from/to inputs applied on Enter or blur, and a reset.
import { useId, useState } from 'react';

export function ZoomControl({
  zoom,
  unit,
  onChange,
}: {
  zoom: [number, number] | null;
  unit: string;
  onChange: (z: [number, number] | null) => void;
}) {
  const id = useId();
  const [from, setFrom] = useState(zoom ? String(zoom[0]) : '');
  const [to, setTo] = useState(zoom ? String(zoom[1]) : '');
  // A new zoom (applied, reset or from the x axis) replaces what the inputs hold; adjusted while
  // rendering (React's pattern for state that follows a prop), not in an effect after a commit.
  const [shownZoom, setShownZoom] = useState(zoom);
  if (zoom !== shownZoom) {
    setShownZoom(zoom);
    setFrom(zoom ? String(zoom[0]) : '');
    setTo(zoom ? String(zoom[1]) : '');
  }
  const a = Number(from);
  const b = Number(to);
  const valid = from.trim() !== '' && to.trim() !== '' && Number.isFinite(a) && Number.isFinite(b) && a < b;
  const apply = () => {
    if (valid && (zoom?.[0] !== a || zoom?.[1] !== b)) onChange([a, b]);
  };
  const bound = (testId: string, value: string, set: (v: string) => void, label: string, id?: string) => (
    <input
      id={id}
      data-testid={testId}
      aria-label={label}
      inputMode="decimal"
      size={6}
      value={value}
      aria-invalid={value !== '' && !valid}
      onChange={(e) => set(e.target.value)}
      onBlur={apply}
      onKeyDown={(e) => e.key === 'Enter' && apply()}
    />
  );
  return (
    <span className="chart-zoom" role="group" aria-label="Zoom to an x range">
      <label htmlFor={id}>zoom {unit}</label>
      {bound('chart-zoom-from', from, setFrom, `zoom from ${unit}`, id)}–{bound('chart-zoom-to', to, setTo, `zoom to ${unit}`)}
      <button type="button" data-testid="chart-zoom-reset" disabled={!zoom} onClick={() => onChange(null)}>
        All
      </button>
    </span>
  );
}
