// In the run bar: "Share result" (the held run as one file), "Web page" (a standalone page of
// its charts that embeds that file), "Link" (the result in a link, where it fits) and "Open result…"
// (a file or page).
import { useRef, useState } from 'react';

import { HiddenFileInput } from '../components/HiddenFileInput';
import { useStore } from '../store';
import { openResultFile, shareCurrentRun, shareLink, useShared } from './share';

export function ShareButtons() {
  const canShare = useStore((s) => s.runConfig !== null && s.metrics.length > 0 && (s.status === 'paused' || s.status === 'done'));
  const fileRef = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const openError = useShared((s) => s.error);
  const [link, setLink] = useState<{ url: string; snapshots: boolean } | null>(null);
  const share = (kind: 'json' | 'html') => {
    setBusy(true);
    void shareCurrentRun(kind)
      .then(setError, (e: unknown) => setError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(false));
  };
  return (
    <div className="share-buttons" role="group" aria-label="Share">
      <button
        type="button"
        data-testid="share-result"
        disabled={!canShare || busy}
        title="One file with this run's config, metrics and latest selection snapshots; it reopens in any browser with Open result…"
        onClick={() => share('json')}
      >
        Share result
      </button>
      <button
        type="button"
        data-testid="share-html"
        disabled={!canShare || busy}
        title="One web page with this run's charts (loss, validation, accuracy against chance) and config: it opens in any browser, offline, without the app; Open result… reopens it whole"
        onClick={() => share('html')}
      >
        Web page
      </button>
      <button
        type="button"
        data-testid="share-link"
        disabled={!canShare || busy}
        title="A link that opens this run's result (config, metrics and, where they fit, its selections) in any browser's copy of this page"
        onClick={() => {
          setBusy(true);
          void shareLink()
            .then((r) => ('error' in r ? setError(r.error) : (setError(null), setLink(r))))
            .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
            .finally(() => setBusy(false));
        }}
      >
        Link
      </button>
      <button type="button" data-testid="open-result" onClick={() => fileRef.current?.click()}>
        Open result…
      </button>
      <HiddenFileInput
        inputRef={fileRef}
        accept=".json,.html,application/json,text/html"
        label="Shared result file"
        testId="open-result-input"
        onFile={async (f) => {
          if (f) await openResultFile(f);
        }}
      />
      {link && (
        <span className="share-link">
          <input
            readOnly
            data-testid="share-link-url"
            aria-label={`Link to this result${link.snapshots ? '' : ' (without its selections: they do not fit a link)'}`}
            value={link.url}
            onFocus={(e) => e.currentTarget.select()}
          />
          <button
            type="button"
            onClick={() =>
              void navigator.clipboard?.writeText(link.url).then(
                () => setLink(null),
                () => setError('Copying failed: select the link and copy it.'),
              )
            }
          >
            Copy
          </button>
          <button type="button" className="link" aria-label="Hide the link" onClick={() => setLink(null)}>
            ✕
          </button>
        </span>
      )}
      {(error ?? openError) && (
        <span className="error-text" role="alert" data-testid="share-error">
          {error ?? openError}
        </span>
      )}
    </div>
  );
}
