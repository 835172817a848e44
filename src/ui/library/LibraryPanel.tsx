// The run library: every run this browser saved (autosaves go to the run's own entry) or imported,
// newest first (or only those with one tag: a sweep's runs), with open / continue / rename / download /
// delete and "same config, other attention"; an import button for checkpoint files; the last
// failure; Undo for a delete or a Reset.
import './library.css';

import { useEffect, useMemo, useRef } from 'react';

import { HiddenFileInput } from '../components/HiddenFileInput';
import { undoReset } from '../controller';
import { useStore } from '../store';
import { importCheckpointFile, refreshLibrary, undoDelete } from './library-actions';
import { useLibrary } from './library-state';
import { LibraryRow, useCurrentRunId } from './LibraryRow';
import { filterByTag, tagChoices } from './tag-filter';

function UndoBar() {
  const undo = useLibrary((s) => s.undo);
  const setUndo = useLibrary((s) => s.setUndo);
  const busy = useStore((s) => s.status === 'starting' || s.status === 'running' || s.status === 'pausing');
  if (!undo) return null;
  const text =
    undo.kind === 'delete'
      ? `Deleted “${undo.record.entry.name}”.`
      : `Run reset; “${undo.name}” stays in the library at step ${undo.step}.`;
  return (
    <p className="note undo-bar" role="status" data-testid="library-undo" data-kind={undo.kind}>
      {text}{' '}
      <button
        type="button"
        data-testid="library-undo-button"
        disabled={undo.kind === 'reset' && busy}
        onClick={() => void (undo.kind === 'delete' ? undoDelete() : undoReset())}
      >
        {undo.kind === 'delete' ? 'Undo delete' : 'Undo reset'}
      </button>{' '}
      <button type="button" className="link" aria-label="Hide this message" onClick={() => setUndo(null)}>
        ✕
      </button>
    </p>
  );
}

/** Lists only the runs with one tag (a sweep's runs included); hidden while no run has a tag. */
function TagFilter() {
  const entries = useLibrary((s) => s.entries);
  const filterTag = useLibrary((s) => s.filterTag);
  const setFilterTag = useLibrary((s) => s.setFilterTag);
  const { tags, sweeps } = useMemo(() => tagChoices(entries), [entries]);
  if (!tags.length && !sweeps.length && filterTag === null) return null;
  const known = filterTag === null || [...tags, ...sweeps].some((t) => t.tag === filterTag);
  return (
    <label className="tag-filter">
      Show{' '}
      <select data-testid="library-filter" value={filterTag ?? ''} onChange={(e) => setFilterTag(e.target.value || null)}>
        <option value="">all runs</option>
        {tags.length > 0 && (
          <optgroup label="Tagged">
            {tags.map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.runs})
              </option>
            ))}
          </optgroup>
        )}
        {sweeps.length > 0 && (
          <optgroup label="Sweeps">
            {sweeps.map((t) => (
              <option key={t.tag} value={t.tag}>
                sweep {t.name} ({t.runs})
              </option>
            ))}
          </optgroup>
        )}
        {!known && <option value={filterTag}>{filterTag} (0)</option>}
      </select>
    </label>
  );
}

export function LibraryPanel({ onOpen }: { onOpen(id: string): void }) {
  const allEntries = useLibrary((s) => s.entries);
  const filterTag = useLibrary((s) => s.filterTag);
  const entries = useMemo(() => filterByTag(allEntries, filterTag), [allEntries, filterTag]);
  const loaded = useLibrary((s) => s.loaded);
  const error = useLibrary((s) => s.error);
  const currentId = useCurrentRunId();
  const busy = useStore((s) => s.status === 'starting' || s.status === 'running' || s.status === 'pausing');
  const fileRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    void refreshLibrary();
  }, []);
  const onFile = async (file: File | undefined) => {
    if (file) await importCheckpointFile({ name: file.name, bytes: async () => new Uint8Array(await file.arrayBuffer()) });
  };
  return (
    <section className="panel library-panel" aria-labelledby="library-heading" data-testid="library-panel">
      <div className="library-head">
        <h2 id="library-heading">Run library</h2>
        <TagFilter />
        <button
          type="button"
          data-testid="library-upload"
          title="Add a checkpoint.safetensors file (made by the CLI or another browser), or a PyTorch export zipped (npm run export, nsa_playground.train), to the library"
          onClick={() => fileRef.current?.click()}
        >
          Upload checkpoint…
        </button>
        <HiddenFileInput
          inputRef={fileRef}
          accept=".safetensors,.zip,application/octet-stream,application/zip"
          label="Checkpoint file to add to the library"
          testId="library-upload-input"
          onFile={onFile}
        />
      </div>
      <p className="muted">
        Runs saved in this browser (IndexedDB): each run autosaves into its own entry. Tick two or more to compare them.
      </p>
      {error && (
        <p className="error-text" role="alert" data-testid="library-error">
          {error}
        </p>
      )}
      <UndoBar />
      {loaded && allEntries.length === 0 ? (
        <p className="muted" data-testid="library-empty">
          No saved runs yet: train (or Step) a run, or upload a checkpoint.
        </p>
      ) : loaded && entries.length === 0 ? (
        <p className="muted" data-testid="library-filter-empty">
          No run has the tag {filterTag}.{' '}
          <button type="button" className="link" onClick={() => useLibrary.getState().setFilterTag(null)}>
            Show all runs
          </button>
        </p>
      ) : (
        <div className="table-scroll">
          <table className="library-table" data-testid="library-table">
            <thead>
              <tr>
                {/* A header with text (axe: empty-table-header), shown to screen readers only. */}
                <th scope="col">
                  <span className="visually-hidden">Compare</span>
                </th>
                <th scope="col">Run</th>
                <th scope="col" className="num">
                  Steps
                </th>
                <th scope="col" className="num">
                  Best val loss
                </th>
                <th scope="col">Saved</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <LibraryRow key={e.id} entry={e} current={e.id === currentId} busy={busy} onOpen={onOpen} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
