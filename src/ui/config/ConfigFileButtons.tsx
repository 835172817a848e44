// Export the config as a JSON file; import one (validated: on any error nothing changes and every
// problem is listed with its field).
import { useRef, useState } from 'react';

import type { RunConfig } from '../../train/config';
import { HiddenFileInput } from '../components/HiddenFileInput';
import { downloadConfig, formatParseErrors, readConfigFile } from '../config-io';
import type { UiPresetName } from './presets';

export interface ConfigFileButtonsProps {
  value: RunConfig;
  onImport(c: RunConfig): void;
  /** Recorded in the exported file (informative). */
  preset?: UiPresetName;
  disabled?: boolean;
}

type Status = { kind: 'idle' } | { kind: 'imported'; name: string } | { kind: 'failed'; name: string; errors: string[] };

export function ConfigFileButtons({ value, onImport, preset, disabled }: ConfigFileButtonsProps) {
  const fileRef = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState<Status>({ kind: 'idle' });
  // A failed import's message goes once the config changes (an edit, a preset, a link) or on Dismiss;
  // adjusted while rendering (React's pattern for state that follows a prop), not in an effect.
  const [shownValue, setShownValue] = useState(value);
  if (value !== shownValue) {
    setShownValue(value);
    if (status.kind === 'failed') setStatus({ kind: 'idle' });
  }
  const onFile = async (file: File | undefined) => {
    if (!file) return;
    const r = await readConfigFile(file);
    if (r.ok) {
      onImport(r.config);
      setStatus({ kind: 'imported', name: file.name });
    } else {
      setStatus({ kind: 'failed', name: file.name, errors: formatParseErrors(r.errors) });
    }
  };
  return (
    <div className="cfg-file">
      <button type="button" data-testid="config-export" onClick={() => downloadConfig(value, preset)}>
        Export JSON
      </button>
      <button type="button" data-testid="config-import" disabled={disabled} onClick={() => fileRef.current?.click()}>
        Import JSON…
      </button>
      <HiddenFileInput
        inputRef={fileRef}
        accept=".json,application/json"
        label="Config JSON file to import"
        testId="config-import-input"
        onFile={onFile}
      />
      <span aria-live="polite" className="cfg-file-status">
        {status.kind === 'imported' && <span data-testid="config-import-ok">Imported {status.name}.</span>}
      </span>
      {status.kind === 'failed' && (
        <div className="error" role="alert" data-testid="config-import-errors">
          Could not import {status.name}; the configuration is unchanged.{' '}
          <button type="button" className="link" data-testid="config-import-dismiss" onClick={() => setStatus({ kind: 'idle' })}>
            Dismiss
          </button>
          <ul>
            {status.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
