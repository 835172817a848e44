// The sweep panel (W&B-sweep style): plan a grid of `npm run learn` settings and run them on this
// GPU one after another into the run library; the results table fills as they finish. Stop pauses
// the setting in training; Resume continues with the next unfinished setting, after a reload too.
// Under the table: npm run learn's accuracy figure of the settings, and the table and figure as files.
import './sweep.css';

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';

import { percent } from '../charts/chance-band';
import { FoldPanel } from '../components/FoldPanel';
import { downloadText } from '../heartbeat/download';
import type { RunHistory } from '../library/entry';
import { libraryStorage } from '../library/library-actions';
import { useLibrary } from '../library/library-state';
import { useStore } from '../store';
import { sweepCsv, sweepFigureSvg } from './sweep-figure';
import { nextSetting, sweepTag } from './sweep-plan';
import { sweepResults } from './sweep-results';
import { runSweep, startSweep, stopSweep } from './sweep-runner';
import { useSweep } from './sweep-state';
import { SweepFormView } from './SweepFormView';
import { SweepTable } from './SweepTable';

/** The sweep's name as a file name stem. */
const fileStem = (name: string) => `sweep_${name.replace(/[^\w.-]+/g, '_').replace(/^_+|_+$/g, '')}`;

const NONE: RunHistory = { metrics: [], evals: [] };

/**
 * The stored histories of the sweep's runs in the library, read again after each save (one read per
 * save; a read that a newer save overtook is dropped).
 */
function useStoredHistories(ids: readonly string[]): void {
  const entries = useLibrary((s) => s.entries);
  const histories = useLibrary((s) => s.histories);
  const reading = useRef(new Map<string, string>()); // id → savedAt of the save being read
  useEffect(() => {
    const savedAt = new Map(entries.map((e) => [e.id, e.savedAt]));
    const current = (id: string) => useLibrary.getState().entries.find((e) => e.id === id)?.savedAt;
    for (const id of ids) {
      const at = savedAt.get(id);
      if (at === undefined || id in histories || reading.current.get(id) === at) continue;
      reading.current.set(id, at);
      void libraryStorage.history(id).then(
        (h) => {
          if (reading.current.get(id) === at) reading.current.delete(id);
          if (h && current(id) === at) useLibrary.getState().setHistory(id, h);
        },
        (e: unknown) => {
          reading.current.delete(id);
          useSweep.getState().setError(`Reading a sweep run's history failed: ${e instanceof Error ? e.message : String(e)}`);
        },
      );
    }
  }, [ids, entries, histories]);
}

export function SweepPanel({ onCompare }: { onCompare(ids: string[]): void }) {
  const sweep = useSweep((s) => s.sweep);
  const running = useSweep((s) => s.running);
  const stopping = useSweep((s) => s.stopping);
  const error = useSweep((s) => s.error);
  const pageBusy = useStore((s) => s.status === 'starting' || s.status === 'running' || s.status === 'pausing');
  const histories = useLibrary((s) => s.histories);
  const [planning, setPlanning] = useState(false);
  const ids = useMemo(() => (sweep?.settings ?? []).flatMap((x) => (x.libraryId ? [x.libraryId] : [])), [sweep]);
  // The page's run when it is one of the sweep's (its live metrics fill its row); other runs' updates do not redraw the panel.
  const live = useStore((s) => (s.status !== 'idle' && s.libraryId !== null && ids.includes(s.libraryId) ? s.libraryId : null));
  const metrics = useStore((s) => (live === null ? NONE.metrics : s.metrics));
  const evals = useStore((s) => (live === null ? NONE.evals : s.evals));
  useStoredHistories(ids);
  const history = useCallback(
    (id: string) => (id === live ? { metrics, evals } : (histories[id] ?? null)),
    [live, metrics, evals, histories],
  );
  const rows = useMemo(() => (sweep ? sweepResults(sweep, history) : []), [sweep, history]);
  const figure = useMemo(() => (sweep ? sweepFigureSvg(sweep, history) : null), [sweep, history]);
  const next = sweep ? nextSetting(sweep) : -1;
  const finished = sweep ? sweep.settings.filter((x) => x.state === 'finished').length : 0;
  const best = rows.reduce<number | null>(
    (b, r) => (r.bestAccuracy !== null && (b === null || r.bestAccuracy > b) ? r.bestAccuracy : b),
    null,
  );
  const disabledReason = running
    ? 'A sweep is running.'
    : pageBusy
      ? 'Pause the current run first: the sweep trains on the same GPU.'
      : null;
  const summary = sweep ? `${sweep.name}: ${finished} / ${sweep.settings.length} settings${running ? ', training' : ''}` : 'none yet';
  return (
    <FoldPanel
      title="Sweep"
      summary={summary}
      className="sweep-panel"
      testId="sweep-panel"
      data={{ 'data-running': running, 'data-finished': finished, 'data-settings': sweep?.settings.length ?? 0 }}
    >
      <p className="muted">
        The <code>npm run learn</code> grid on this GPU: a task preset trained once per mechanism × seed × learning rate, one setting after
        another, each a run of the library tagged with the sweep; a setting stops at the first evaluation reaching the target accuracy.
      </p>
      {error && (
        <p className="error-text" role="alert" data-testid="sweep-error">
          {error}
        </p>
      )}
      {sweep && (
        <>
          <div className="sweep-bar">
            <span className="sweep-facts">
              <strong data-testid="sweep-name">{sweep.name}</strong>{' '}
              <span className="muted" data-testid="sweep-facts">
                {sweep.grid.preset} · target {percent(sweep.grid.target)} · {finished} of {sweep.settings.length} finished
                {best !== null ? ` · best ${percent(best)}` : ''}
              </span>
            </span>
            {running ? (
              <button type="button" data-testid="sweep-stop" disabled={stopping} onClick={stopSweep}>
                {stopping ? 'Stopping…' : 'Stop'}
              </button>
            ) : (
              next >= 0 && (
                <button
                  type="button"
                  data-testid="sweep-resume"
                  disabled={pageBusy}
                  title={pageBusy ? 'Pause the current run first' : 'Continue with the next unfinished setting'}
                  onClick={() => void runSweep()}
                >
                  Resume
                </button>
              )
            )}
            <button
              type="button"
              data-testid="sweep-compare"
              disabled={ids.length === 0}
              title="Overlay the sweep's runs in the comparison view"
              onClick={() => onCompare(ids)}
            >
              Compare all
            </button>
            <button
              type="button"
              data-testid="sweep-show-library"
              title="List only this sweep's runs in the run library"
              onClick={() => useLibrary.getState().setFilterTag(sweepTag(sweep.name))}
            >
              Show in library
            </button>
            {!running && (
              <button type="button" data-testid="sweep-new" aria-expanded={planning} onClick={() => setPlanning(!planning)}>
                New sweep…
              </button>
            )}
          </div>
          <SweepTable sweep={sweep} rows={rows} training={running ? next : -1} onOpen={(id) => onCompare([id])} />
          <div className="sweep-downloads">
            Download{' '}
            <button
              type="button"
              data-testid="sweep-download-csv"
              onClick={() => downloadText(`${fileStem(sweep.name)}.csv`, sweepCsv(sweep, rows), 'text/csv')}
            >
              Table (CSV)
            </button>{' '}
            <button
              type="button"
              data-testid="sweep-download-svg"
              disabled={figure === null}
              onClick={() => figure && downloadText(`${fileStem(sweep.name)}_accuracy.svg`, figure, 'image/svg+xml')}
            >
              Figure (SVG)
            </button>
          </div>
          {figure && (
            // The figure of npm run learn (our own SVG text: labels escaped there).
            <div
              className="sweep-figure"
              data-testid="sweep-figure"
              role="img"
              aria-label={`${sweep.name}: held-out answer accuracy against step`}
              dangerouslySetInnerHTML={{ __html: figure }}
            />
          )}
        </>
      )}
      {(!sweep || planning) && !running && (
        <SweepFormView
          disabledReason={disabledReason}
          onStart={(grid, name) => {
            setPlanning(false);
            void startSweep(grid, name).then((why) => why && useSweep.getState().setError(why));
          }}
        />
      )}
    </FoldPanel>
  );
}
