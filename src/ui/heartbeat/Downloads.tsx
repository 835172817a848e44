// The run's data in the CLI's formats: heartbeat.jsonl, metrics.csv, config.json.
import { useState } from 'react';

import { exportRunFiles } from '../controller';
import { useStore } from '../store';
import { downloadText } from './download';

const FILES = [
  { key: 'heartbeatsJsonl', name: 'heartbeat.jsonl', type: 'application/x-ndjson', label: 'Heartbeats (JSONL)' },
  { key: 'metricsCsv', name: 'metrics.csv', type: 'text/csv', label: 'Metrics (CSV)' },
  { key: 'configJson', name: 'config.json', type: 'application/json', label: 'Config (JSON)' },
] as const;

export function Downloads() {
  const hasRun = useStore((s) => s.runInfo !== null);
  const [error, setError] = useState<string | null>(null);
  const get = async (f: (typeof FILES)[number]) => {
    try {
      const files = await exportRunFiles();
      downloadText(f.name, files[f.key], f.type);
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
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
      {error && (
        <span className="error-text" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
