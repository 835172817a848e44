// Run / pause, one step and reset, with their keyboard shortcuts; continue from a checkpoint file.
import { useEffect, useRef, useState } from 'react';

import { HiddenFileInput } from '../components/HiddenFileInput';
import { confirmReset, continueFromCheckpoint, pause, run, stepOnce, toggleRun } from '../controller';
import { useStore } from '../store';
import { shortcutAction, SHORTCUTS } from './shortcuts';

interface Props {
  /** Why a new run cannot start (invalid config, no upload); empty when it can. */
  problems: readonly string[];
}

export function RunControls({ problems }: Props) {
  const status = useStore((s) => s.status);
  const canStart = problems.length === 0;
  const canRun = (status === 'idle' && canStart) || status === 'paused';
  const running = status === 'running';
  const busy = status === 'starting' || status === 'pausing';
  const queued = useStore((s) => s.queuedSteps);
  const fileRef = useRef<HTMLInputElement>(null);
  const [checkpointError, setCheckpointError] = useState<string | null>(null);
  const onCheckpoint = async (file: File | undefined) => {
    if (!file) return;
    setCheckpointError(null);
    setCheckpointError(await continueFromCheckpoint(file));
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const action = shortcutAction({
        key: e.key,
        altKey: e.altKey,
        ctrlKey: e.ctrlKey,
        metaKey: e.metaKey,
        repeat: e.repeat,
        target: e.target as HTMLElement | null,
      });
      if (!action) return;
      e.preventDefault();
      if (action === 'toggle') void toggleRun();
      else if (action === 'step') void stepOnce();
      else void confirmReset();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="run-controls" role="group" aria-label="Run controls">
      {running || status === 'pausing' ? (
        <button
          type="button"
          className="primary"
          data-testid="pause-button"
          aria-keyshortcuts="Space"
          disabled={status === 'pausing'}
          onClick={() => void pause()}
        >
          ❚❚ Pause
        </button>
      ) : (
        <button
          type="button"
          className="primary"
          data-testid="run-button"
          aria-keyshortcuts="Space"
          disabled={!canRun}
          onClick={() => void run()}
        >
          ▶ {status === 'paused' ? 'Resume' : 'Run'}
        </button>
      )}
      <button type="button" data-testid="step-button" aria-keyshortcuts="S" disabled={!canRun || busy} onClick={() => void stepOnce()}>
        Step{queued > 0 && <span data-testid="queued-steps"> (+{queued} queued)</span>}
      </button>
      <button
        type="button"
        data-testid="reset-button"
        aria-keyshortcuts="R"
        disabled={status === 'idle'}
        onClick={() => void confirmReset()}
      >
        ↺ Reset
      </button>
      <button
        type="button"
        data-testid="checkpoint-continue"
        disabled={running || busy}
        title="Start a run from a checkpoint.safetensors file (the CLI's or a downloaded one), paused at its step"
        onClick={() => fileRef.current?.click()}
      >
        Continue from checkpoint…
      </button>
      <HiddenFileInput
        inputRef={fileRef}
        accept=".safetensors,application/octet-stream"
        label="Checkpoint file to continue from"
        testId="checkpoint-input"
        onFile={onCheckpoint}
      />
      {checkpointError && (
        <span className="error-text" role="alert" data-testid="checkpoint-error">
          {checkpointError}
        </span>
      )}
      <span className="muted shortcuts" aria-hidden="true">
        {SHORTCUTS.map((s) => (
          <span key={s.key}>
            <kbd>{s.key}</kbd> {s.label}
          </span>
        ))}
      </span>
    </div>
  );
}
