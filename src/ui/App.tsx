// The playground page: a skip link, the GPU in one line, the run bar, then the experiment — the NSA
// picture and the charts side by side, the config (folded sections) under the picture, the selection
// stepper, generation (./layout/Inspect) and the heartbeat under the charts — then the run library,
// the sweep, the comparison of the library's runs and the benchmark. Components from ./config, ./stepper and ./generate
// are mounted with the page's state; the worker is reached through ./controller only.
import { type MouseEvent, useCallback, useEffect, useMemo, useRef } from 'react';

import { BenchPanel } from './bench/BenchPanel';
import { ChartsPanel } from './charts/ChartsPanel';
import { ComparePanel } from './compare/ComparePanel';
import { AdapterPanel } from './components/AdapterPanel';
import { fieldsAtFault, PanelBoundary } from './components/PanelBoundary';
import { ConfigPanel } from './config/ConfigPanel';
import { cancelBenchmark, newLinkQuestion, probeAdapter, reset, runBenchmark, startProblems } from './controller';
import { ExplainPanel } from './explain/ExplainPanel';
import { HeartbeatPanel } from './heartbeat/HeartbeatPanel';
import { Inspect } from './layout/Inspect';
import { useLibrary } from './library/library-state';
import { LibraryPanel } from './library/LibraryPanel';
import { runIdFromSearch, writeRunToUrl } from './library/run-link';
import { AutosaveBanner, useAutosaveGuards } from './run/Autosave';
import { RunPanel } from './run/RunPanel';
import { openResultFromLink } from './share/share';
import { SharedResultPanel } from './share/SharedResultPanel';
import { useStore } from './store';
import { SweepPanel } from './sweep/SweepPanel';
import { onHashConfigChange, writeConfigToHash } from './url-state';

/**
 * Keeps the config in the URL hash (the held run's while a run exists; never text that is not a
 * number), and takes a pasted link's config: into the draft when no run is held, else after
 * asking, as a new run draft (the held run is reset; its autosave stays in the run library).
 * A link whose keys were partly refused stays in the address bar, with the notice, until an edit.
 */
function useHashSync(): void {
  const shown = useStore((s) => s.runConfig ?? s.config);
  const notice = useStore((s) => s.configNotice);
  const skipFirstWrite = useRef(notice !== null);
  useEffect(() => {
    if (skipFirstWrite.current) {
      skipFirstWrite.current = false;
      return;
    }
    writeConfigToHash(shown);
  }, [shown]);
  useEffect(
    () =>
      onHashConfigChange((h) => {
        const s = useStore.getState();
        if (!s.runConfig || s.status === 'idle') return s.loadHashConfig(h);
        if (!window.confirm(newLinkQuestion())) {
          writeConfigToHash(s.runConfig); // the address bar shows the held run again
          return;
        }
        void reset().then(() => useStore.getState().loadHashConfig(h));
      }),
    [],
  );
}

/** A page opened with ?run=<id>: that library run's curves, once the library is read; or why not. */
function useRunFromUrl(openRun: (id: string) => void): void {
  const loaded = useLibrary((l) => l.loaded);
  const done = useRef(false);
  useEffect(() => {
    if (done.current || !loaded || typeof location === 'undefined') return;
    done.current = true;
    const id = runIdFromSearch(location.search);
    if (id === null) return;
    if (useLibrary.getState().entries.some((e) => e.id === id)) openRun(id);
    else {
      useLibrary.getState().setError(`The linked run (${id}) is not in this browser's run library: runs are kept per browser.`);
      writeRunToUrl(null);
    }
  }, [loaded, openRun]);
}

/** The skip link: focus on Run (or the first enabled run control), the run bar scrolled into view. */
function skipToRun(e: MouseEvent): void {
  e.preventDefault();
  const panel = document.getElementById('run-panel');
  const target = panel?.querySelector<HTMLElement>('.run-controls button:not(:disabled)') ?? panel;
  target?.focus();
  panel?.scrollIntoView({ block: 'nearest' });
}

export function App() {
  const adapterStatus = useStore((s) => s.adapter.status);
  const config = useStore((s) => s.config);
  const runConfig = useStore((s) => s.runConfig);
  const notice = useStore((s) => s.configNotice);
  const upload = useStore((s) => s.upload);
  const status = useStore((s) => s.status);
  const setConfig = useStore((s) => s.setConfig);
  const setUpload = useStore((s) => s.setUpload);
  const validConfig = useStore((s) => s.validConfig);
  const shown = runConfig ?? config;
  // Views that derive geometry from the config get a validated one: the held run's, else the last
  // edited config that passed validation (a draft value such as seqLen 1e308 never reaches them).
  const drawn = runConfig ?? validConfig;
  const draftInvalid = runConfig === null && config !== validConfig;
  const boundary = useMemo(
    () => ({
      resetKey: shown,
      fields: () => {
        const s = useStore.getState();
        return s.runConfig ? [] : fieldsAtFault(s.config, s.validConfig);
      },
      onRevert: () => {
        const s = useStore.getState();
        if (s.status === 'idle') s.setConfig(s.validConfig);
      },
    }),
    [shown],
  );
  const problems = useMemo(() => startProblems(config, upload), [config, upload]);
  const compareRef = useRef<HTMLElement>(null);
  // "Open" a library run: its curves alone in the comparison view, scrolled to.
  const openRun = useCallback((id: string) => {
    writeRunToUrl(id); // the address bar now links to this run's view
    useLibrary.getState().setCompare([id]);
    requestAnimationFrame(() => compareRef.current?.scrollIntoView({ behavior: 'smooth', block: 'start' }));
  }, []);
  // A sweep's runs overlaid (one: opened as Open does).
  const compareRuns = useCallback(
    (ids: string[]) => {
      if (ids.length === 1) return openRun(ids[0]);
      writeRunToUrl(null);
      useLibrary.getState().setCompare(ids);
      requestAnimationFrame(() => compareRef.current?.scrollIntoView({ behavior: 'smooth', block: 'start' }));
    },
    [openRun],
  );
  useHashSync();
  useRunFromUrl(openRun);
  useAutosaveGuards();
  useEffect(() => {
    void probeAdapter();
    void openResultFromLink(); // a page opened with ?result=… shows that result
  }, []);
  return (
    <main>
      {/* The URL hash holds the config, so the link moves the focus itself instead of following #run-panel. */}
      <a className="skip-link" href="#run-panel" data-testid="skip-to-run" onClick={skipToRun}>
        Skip to the run controls
      </a>
      <header className="page-head">
        <h1>NSA Playground</h1>
        <p className="muted">
          Train a small Native Sparse Attention language model on your GPU with WebGPU, watch it learn, and step through which key blocks
          each query selects.
        </p>
      </header>
      <PanelBoundary panel="GPU adapter">
        <AdapterPanel />
      </PanelBoundary>
      {adapterStatus === 'ready' && (
        <>
          {notice && (
            <p className="note" role="status" data-testid="config-notice">
              {notice}
            </p>
          )}
          <AutosaveBanner />
          {/* The experiment first: the run bar, then the NSA picture and the charts side by side; the
              config (its sections folded) under the picture, the stepper and generation under the charts. */}
          <PanelBoundary panel="Run" {...boundary}>
            <RunPanel problems={problems} />
          </PanelBoundary>
          <PanelBoundary panel="Shared result">
            <SharedResultPanel />
          </PanelBoundary>
          <div className="layout">
            <div className="col-config">
              <PanelBoundary panel="How NSA works" {...boundary}>
                <ExplainPanel
                  nsa={drawn.model.nsa}
                  T={drawn.model.seqLen}
                  dense={drawn.model.attention === 'dense'}
                  stale={draftInvalid}
                  model={drawn.model}
                />
              </PanelBoundary>
              <PanelBoundary panel="Configuration" {...boundary}>
                <ConfigPanel value={shown} onChange={setConfig} disabled={status !== 'idle'} upload={upload} onUpload={setUpload} />
              </PanelBoundary>
            </div>
            <div className="col-run">
              <PanelBoundary panel="Charts" {...boundary}>
                <ChartsPanel />
              </PanelBoundary>
              <PanelBoundary panel="Inspect" {...boundary}>
                <Inspect />
              </PanelBoundary>
              <PanelBoundary panel="Heartbeat" {...boundary}>
                <HeartbeatPanel />
              </PanelBoundary>
            </div>
          </div>
          <PanelBoundary panel="Run library">
            <LibraryPanel onOpen={openRun} />
          </PanelBoundary>
          <PanelBoundary panel="Sweep">
            <SweepPanel onCompare={compareRuns} />
          </PanelBoundary>
          <PanelBoundary panel="Compare runs">
            <ComparePanel ref={compareRef} />
          </PanelBoundary>
          <PanelBoundary panel="NSA vs dense benchmark">
            <BenchPanel
              onRun={runBenchmark}
              onCancel={() => void cancelBenchmark()}
              busyReason={
                status === 'running' || status === 'pausing' || status === 'starting'
                  ? 'Pause the training run to benchmark: both would share the GPU.'
                  : null
              }
            />
          </PanelBoundary>
        </>
      )}
    </main>
  );
}
