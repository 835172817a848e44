// The smoothing slider the charts and the comparison view share: label, range 0 … 0.99, value.
import { useId } from 'react';

export function SmoothingControl(props: {
  value: number;
  onChange: (smoothing: number) => void;
  /** data-testid of the slider and of the shown value. */
  testId: string;
  valueTestId?: string;
}) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>Smoothing</label>
      <input
        id={id}
        data-testid={props.testId}
        type="range"
        min={0}
        max={0.99}
        step={0.01}
        value={props.value}
        onChange={(e) => props.onChange(Number(e.target.value))}
      />
      <output htmlFor={id} data-testid={props.valueTestId}>
        {props.value.toFixed(2)}
      </output>
    </>
  );
}
