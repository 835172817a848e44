// The autosave in the page (into the run library): the banner offering an earlier page's run after a reload, the status
// line next to the run controls (errors included), and the guards that keep steps from being lost
// (save when the tab is hidden; ask before leaving while steps are not autosaved).
import { useEffect } from 'react';

import { autosaveIfIdle, continueFromAutosave, dismissAutosave, findAutosave, unsavedRunSteps } from '../controller';
import { useStore } from '../store';

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Looks for an autosave once, saves when the tab is hidden, and prompts before unloading unsaved steps. */
export function useAutosaveGuards(): void {
  useEffect(() => {
    void findAutosave();
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') void autosaveIfIdle();
    };
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (unsavedRunSteps() === 0) return;
      e.preventDefault();
      e.returnValue = ''; // older browsers show the prompt only with this
    };
    document.addEventListener('visibilitychange', onVisibility);
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('beforeunload', onBeforeUnload);
    };
  }, []);
}

/** "A run was saved at step N (time) — Continue / Dismiss", while no run exists (a dismissed run stays in the run library). */
export function AutosaveBanner() {
  const meta = useStore((s) => s.restorable);
  const status = useStore((s) => s.status);
  if (!meta || status !== 'idle') return null;
  return (
    <div className="note autosave-banner" role="status" data-testid="autosave-banner" data-step={meta.stepsDone}>
      A run was saved at step {meta.stepsDone} ({when(meta.savedAt)}): “{meta.name}” <span className="muted">{meta.summary}</span> —{' '}
      <button type="button" className="primary" data-testid="autosave-continue" onClick={() => void continueFromAutosave()}>
        Continue
      </button>{' '}
      <button
        type="button"
        data-testid="autosave-discard"
        title="Hide this offer; the run stays in the run library"
        onClick={() => void dismissAutosave()}
      >
        Dismiss
      </button>
    </div>
  );
}

/** The last autosave, or why it failed. */
export function AutosaveStatusLine() {
  const a = useStore((s) => s.autosave);
  if (!a) return null;
  if (a.state === 'error')
    return (
      <p className="error-text" role="alert" data-testid="autosave-status" data-state="error">
        {a.message}
      </p>
    );
  return (
    <p className="muted autosave-status" role="status" data-testid="autosave-status" data-state={a.state} data-step={a.step}>
      {a.state === 'saving' ? `Autosaving step ${a.step}…` : `Autosaved at step ${a.step} (${when(a.savedAt)}) in this browser.`}
    </p>
  );
}
