// The run's data in the CLI's formats: heartbeat.jsonl, metrics.csv, config.json, and the
// checkpoint (checkpoint.safetensors: `npm run train -- --resume` and "Continue from checkpoint…"
// go on from it).
import { useState } from 'react';

import { closestPreset } from '../config/presets';
import { exportRunFiles, runCheckpoint } from '../controller';
import { useLibrary } from '../library/library-state';
import { useStore } from '../store';
import { downloadText } from './download';
import { runFileName } from './file-name';

/** The library name of the run held by the page, if it has been saved. */
function currentRunName(): string | null {
  const id = useStore.getState().libraryId;
  return useLibrary.getState().entries.find((e) => e.id === id)?.name ?? null;
}

const FILES = [
  { key: 'heartbeatsJsonl', name: 'heartbeat.jsonl', type: 'application/x-ndjson', label: 'Heartbeats (JSONL)' },
  { key: 'metricsCsv', name: 'metrics.csv', type: 'text/csv', label: 'Metrics (CSV)' },
  { key: 'configJson', name: 'config.json', type: 'application/json', label: 'Config (JSON)' },
] as const;

export function Downloads() {
  const hasRun = useStore((s) => s.runInfo !== null);
  const canSave = useStore((s) => s.runInfo !== null && (s.status === 'paused' || s.status === 'done'));
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const get = async (f: (typeof FILES)[number]) => {
    try {
      const files = await exportRunFiles();
      const { runConfig, stepsDone } = useStore.getState();
      downloadText(runFileName(runConfig, currentRunName(), stepsDone, f.name), files[f.key], f.type);
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  const saveCheckpoint = async () => {
    setSaving(true);
    setError(null);
    try {
      const bytes = (await runCheckpoint()) as Uint8Array<ArrayBuffer>;
      const { runConfig, stepsDone } = useStore.getState();
      const name = `${runConfig ? closestPreset(runConfig) : 'run'}-step${stepsDone}.safetensors`;
      downloadText(name, bytes, 'application/octet-stream');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setSaving(false);
    }
  };
  return (
    <div className="downloads" role="group" aria-label="Download run data">
      <span className="muted">Download</span>
      {FILES.map((f) => (
        <button key={f.key} type="button" data-testid={`download-${f.name}`} disabled={!hasRun} onClick={() => void get(f)}>
          {f.label}
        </button>
      ))}
      <button
        type="button"
        data-testid="download-checkpoint"
        disabled={!canSave || saving}
        title="checkpoint.safetensors: parameters, AdamW moments, step, data cursor, config, metrics (pause the run first)"
        onClick={() => void saveCheckpoint()}
      >
        Checkpoint (safetensors)
      </button>
      {error && (
        <span className="error-text" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
