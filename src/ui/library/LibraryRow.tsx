// One run of the library: pick it for the comparison, its name (renamed in place), config summary,
// steps, best validation loss and date, and its actions.
import { useState } from 'react';

import { continueFromLibrary } from '../controller';
import { useStore } from '../store';
import { counterpartLabel, windowOnlyConfig } from './counterpart';
import { startCounterpart } from './counterpart-run';
import type { LibraryEntry } from './entry';
import { annotateRun, deleteRun, downloadRunCheckpoint, downloadRunForPyTorch, renameRun } from './library-actions';
import { useLibrary } from './library-state';

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

interface Props {
  entry: LibraryEntry;
  /** The page's live run is this entry. */
  current: boolean;
  /** A run is starting or training: nothing can be continued or started. */
  busy: boolean;
  onOpen(id: string): void;
}

export function LibraryRow({ entry: e, current, busy, onOpen }: Props) {
  const picked = useLibrary((s) => s.compare.includes(e.id));
  const toggleCompare = useLibrary((s) => s.toggleCompare);
  const [editing, setEditing] = useState<string | null>(null);
  // Notes and tags being edited (null: shown, not edited).
  const [notesDraft, setNotesDraft] = useState<{ notes: string; tags: string } | null>(null);
  const saveNotes = () => {
    if (notesDraft) void annotateRun(e.id, notesDraft.notes, notesDraft.tags);
    setNotesDraft(null);
  };
  const saveName = () => {
    if (editing !== null && editing !== e.name) void renameRun(e.id, editing);
    setEditing(null);
  };
  const onContinue = async () => {
    const error = await continueFromLibrary(e.id);
    if (error) useLibrary.getState().setError(`Cannot continue ${e.name}: ${error}`);
  };
  return (
    <tr
      data-testid="library-row"
      data-run-id={e.id}
      data-name={e.name}
      data-steps={e.stepsDone}
      className={current ? 'current' : undefined}
    >
      <td>
        <input
          type="checkbox"
          data-testid="library-compare"
          aria-label={`Compare ${e.name}`}
          checked={picked}
          onChange={() => toggleCompare(e.id)}
        />
      </td>
      <td className="run-name">
        {editing === null ? (
          <>
            <span data-testid="library-name">{e.name}</span>
            {current && <span className="badge">current</span>}
            {e.origin === 'import' && <span className="badge muted">imported</span>}
          </>
        ) : (
          <input
            data-testid="library-name-input"
            aria-label="Run name"
            value={editing}
            autoFocus
            onChange={(ev) => setEditing(ev.target.value)}
            onBlur={saveName}
            onKeyDown={(ev) => {
              if (ev.key === 'Enter') saveName();
              else if (ev.key === 'Escape') setEditing(null);
            }}
          />
        )}
        <div className="muted summary">{e.summary}</div>
        {notesDraft === null ? (
          (e.tags?.length || e.notes) && (
            <div className="run-notes">
              {e.tags?.map((t) => (
                <button
                  key={t}
                  type="button"
                  className="badge tag"
                  data-testid="library-tag"
                  title={`List only the runs tagged ${t}`}
                  onClick={() => useLibrary.getState().setFilterTag(t)}
                >
                  {t}
                </button>
              ))}
              {e.notes && (
                <p className="notes-text" data-testid="library-notes">
                  {e.notes}
                </p>
              )}
            </div>
          )
        ) : (
          <div className="run-notes-edit">
            <label>
              Tags <span className="muted">(comma-separated)</span>
              <input
                data-testid="library-tags-input"
                value={notesDraft.tags}
                onChange={(ev) => setNotesDraft({ ...notesDraft, tags: ev.target.value })}
              />
            </label>
            <label>
              Notes
              <textarea
                data-testid="library-notes-input"
                rows={3}
                value={notesDraft.notes}
                onChange={(ev) => setNotesDraft({ ...notesDraft, notes: ev.target.value })}
              />
            </label>
            <div className="action-buttons">
              <button type="button" data-testid="library-notes-save" onClick={saveNotes}>
                Save
              </button>
              <button type="button" onClick={() => setNotesDraft(null)}>
                Cancel
              </button>
            </div>
          </div>
        )}
      </td>
      <td className="num" data-testid="library-steps">
        {e.stepsDone} / {e.config.train.steps}
      </td>
      <td className="num" data-testid="library-best-val">
        {e.bestValLoss === null ? '—' : e.bestValLoss.toFixed(4)}
      </td>
      <td className="date">{when(e.savedAt)}</td>
      <td className="actions">
        <div className="action-buttons">
          <button type="button" data-testid="library-open" title="Show its curves in the comparison view" onClick={() => onOpen(e.id)}>
            Open
          </button>
          <button
            type="button"
            data-testid="library-continue"
            disabled={busy || current}
            title="Continue training from its checkpoint, paused at its step"
            onClick={() => void onContinue()}
          >
            Continue
          </button>
          <button type="button" data-testid="library-rename" onClick={() => setEditing(e.name)}>
            Rename
          </button>
          <button
            type="button"
            data-testid="library-notes-edit"
            onClick={() => setNotesDraft({ notes: e.notes ?? '', tags: (e.tags ?? []).join(', ') })}
          >
            Notes & tags
          </button>
          <button
            type="button"
            data-testid="library-download"
            title="Its checkpoint file (the CLI's checkpoint.safetensors format)"
            onClick={() => void downloadRunCheckpoint(e.id)}
          >
            Download
          </button>
          <button
            type="button"
            data-testid="library-export-pytorch"
            title="A zip of the PyTorch export (config.json, model.safetensors, optimizer.safetensors): unzip it and load it with nsa_playground's from_pretrained, or continue it with torchrun (README: Take a model to PyTorch)"
            onClick={() => void downloadRunForPyTorch(e.id)}
          >
            PyTorch
          </button>
          <button type="button" data-testid="library-delete" disabled={current} onClick={() => void deleteRun(e.id)}>
            Delete
          </button>
          <button
            type="button"
            data-testid="library-counterpart"
            disabled={busy}
            title="Start a new run with this config and the other attention, and compare the two"
            onClick={() => void startCounterpart(e.id)}
          >
            {counterpartLabel(e.config)}
          </button>
          {windowOnlyConfig(e.config) && (
            <button
              type="button"
              data-testid="library-window-only"
              disabled={busy}
              title="Start a new run with this config and NSA forced to its sliding window (the baseline that cannot reach past w), and compare it with this one"
              onClick={() => void startCounterpart(e.id, 'window')}
            >
              Same config, window only
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}

/** The live run's library id while a run exists (its row is marked and cannot be deleted). */
export function useCurrentRunId(): string | null {
  return useStore((s) => (s.status === 'idle' ? null : s.libraryId));
}
