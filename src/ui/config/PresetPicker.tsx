// Pick a preset; once edited, say which preset the config came from and offer to revert.
import { useId } from 'react';

import type { RunConfig } from '../../train/config';
import { diffSize } from './diff';
import { closestPreset, isUiPresetName, matchingPreset, PRESET_LABELS, UI_PRESET_NAMES, uiPreset } from './presets';

export interface PresetPickerProps {
  value: RunConfig;
  onChange(c: RunConfig): void;
  disabled?: boolean;
}

export function PresetPicker({ value, onChange, disabled }: PresetPickerProps) {
  const id = useId();
  const match = matchingPreset(value);
  const closest = match ?? closestPreset(value);
  const changes = match ? 0 : diffSize(uiPreset(closest), value);
  return (
    <div className="cfg-preset">
      <label htmlFor={id}>Preset</label>
      <select
        id={id}
        data-testid="preset-select"
        value={match ?? ''}
        disabled={disabled}
        onChange={(e) => {
          if (isUiPresetName(e.target.value)) onChange(uiPreset(e.target.value));
        }}
      >
        {!match && (
          <option value="" disabled>
            custom
          </option>
        )}
        {UI_PRESET_NAMES.map((n) => (
          <option key={n} value={n}>
            {PRESET_LABELS[n]}
          </option>
        ))}
      </select>
      {!match && (
        <span className="muted" data-testid="preset-modified">
          {closest} with {changes} change{changes === 1 ? '' : 's'}{' '}
          <button type="button" data-testid="preset-revert" disabled={disabled} onClick={() => onChange(uiPreset(closest))}>
            Revert to {closest}
          </button>
        </span>
      )}
    </div>
  );
}
