// Runs the page's sweep: its settings one after another through the page's own run (./controller:
// the same worker, autosaves into the run library, recovery), each until its steps or the sweep's
// target accuracy (the worker's early stop, as `npm run learn --target`). A finished setting's run
// is named, tagged `sweep:<name>` and annotated in the library. Stop pauses the setting in training
// (it stays 'started': Resume continues it from its autosave, after a reload too).
import type { LearnGrid } from '../../train/learn/grid';
import type { Heartbeat } from '../../train/types';
import { busy, continueFromLibrary, pause, reset, run, unsavedRunSteps } from '../controller';
import { newRunId } from '../library/entry';
import { libraryStorage } from '../library/library-actions';
import { useLibrary } from '../library/library-state';
import { type PlaygroundState, useStore } from '../store';
import { nextSetting, planSweep, settingNotes, settingRunName, type Sweep, sweepTag, withSetting } from './sweep-plan';
import { useSweep } from './sweep-state';

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Resolves once the page's state satisfies `done` (at once when it does already). */
function pageState(done: (s: PlaygroundState) => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (done(useStore.getState())) return resolve();
    const stop = useStore.subscribe((s) => {
      if (!done(s)) return;
      stop();
      resolve();
    });
  });
}

/** The page's run trains no more: a recovery (a lost device, a hung GPU) may have gone on training it after run() returned. */
const notTraining = (s: PlaygroundState) => s.status !== 'starting' && s.status !== 'running' && s.status !== 'pausing';

/** No save of the page's run is pending (saved, failed, or the run is gone). */
const saveSettled = (s: PlaygroundState) =>
  s.status === 'idle' ||
  s.status === 'error' ||
  s.autosave?.state === 'error' ||
  (s.autosavedStep === s.stepsDone && s.autosave?.state !== 'saving');

/**
 * Frees the page for the sweep's next setting: a finished sweep run is reset quietly (it is in the
 * library); another run is reset after asking when it has steps not autosaved. False: not freed.
 */
async function releaseHeldRun(sweep: Sweep): Promise<boolean> {
  const s = useStore.getState();
  if (s.status === 'idle') return true;
  if (busy()) {
    useSweep.getState().setError('Pause the current run first: the sweep trains on the same GPU.');
    return false;
  }
  const ours = sweep.settings.some((x) => x.libraryId === s.libraryId);
  const n = unsavedRunSteps();
  if (
    !ours &&
    n > 0 &&
    !window.confirm(`Start the sweep? The current run is reset, and its ${n} trained steps not autosaved yet are lost.`)
  )
    return false;
  await reset();
  const undo = useLibrary.getState().undo;
  if (ours && undo?.kind === 'reset' && undo.id === s.libraryId) useLibrary.getState().setUndo(null);
  return true;
}

/** Names, tags and annotates a setting's library run once (its first save made the entry). */
async function labelRun(sweep: Sweep, i: number): Promise<void> {
  const x = sweep.settings[i];
  if (!x.libraryId) return;
  const entry = await libraryStorage.entry(x.libraryId);
  const tag = sweepTag(sweep.name);
  if (!entry || entry.tags?.includes(tag)) return;
  await libraryStorage.rename(x.libraryId, settingRunName(sweep, x));
  const labelled = await libraryStorage.annotate(x.libraryId, entry.notes ?? settingNotes(sweep, x), [...(entry.tags ?? []), tag]);
  useLibrary.getState().upsert(labelled);
}

/** The heartbeat held when the page's run last began training (undefined: not yet). */
let beatAtStart: Heartbeat | null | undefined;

/**
 * Pauses the setting in training once Stop was pressed and the worker is training (a beat came
 * after training started: a pause sent earlier, while the worker still sets up its train() call,
 * would be lost).
 */
function pauseIfStopping(s: PlaygroundState): void {
  if (useSweep.getState().stopping && s.status === 'running' && beatAtStart !== undefined && s.heartbeat !== beatAtStart) void pause();
}

/** Watches the page's run while a setting trains (Stop may come while it is still being built). */
function pauseWhenStopped(): () => void {
  beatAtStart = undefined;
  return useStore.subscribe((s, prev) => {
    if (s.status === 'running' && prev.status !== 'running') beatAtStart = s.heartbeat;
    pauseIfStopping(s);
  });
}

/** Trains setting `i` until its steps, its target, or a stop; 'stopped' ends the sweep's loop. */
async function trainSetting(i: number): Promise<'finished' | 'stopped'> {
  const sweep = useSweep.getState().sweep!;
  const x = sweep.settings[i];
  const id = x.libraryId ?? newRunId();
  const held = useStore.getState();
  // Stopped and resumed without a reload, the setting's run is still held (paused): it trains on.
  if (!(held.status === 'paused' && held.libraryId === id)) {
    if (!(await releaseHeldRun(sweep))) return 'stopped';
    const stored = x.libraryId ? await libraryStorage.entry(id) : null;
    if (stored) {
      const error = await continueFromLibrary(id);
      if (error) throw new Error(`Cannot continue ${settingRunName(sweep, x)}: ${error}`);
    } else useStore.getState().setConfig(structuredClone(x.config));
  }
  useSweep.getState().setSweep(withSetting(sweep, i, { libraryId: id, state: 'started' }));
  const unwatch = pauseWhenStopped();
  try {
    await run(id, { stopAtAccuracy: sweep.grid.target });
  } finally {
    unwatch();
  }
  await pageState(notTraining);
  const s = useStore.getState();
  if (s.libraryId !== id || s.status === 'idle') return 'stopped'; // reset or replaced meanwhile
  if (s.status === 'error') throw new Error(`${settingRunName(sweep, x)} failed: ${s.error ?? 'unknown error'}`);
  await pageState(saveSettled);
  const reached = s.evals.some((e) => e.accuracy !== undefined && e.accuracy >= sweep.grid.target);
  const finished = s.status === 'done' || (s.status === 'paused' && reached);
  const now = useSweep.getState().sweep!;
  if (finished) useSweep.getState().setSweep(withSetting(now, i, { state: 'finished' }));
  await labelRun(useSweep.getState().sweep!, i);
  return finished ? 'finished' : 'stopped';
}

/** Trains the sweep's unfinished settings in order (a started one first), until all finished or Stop. */
export async function runSweep(): Promise<void> {
  const st = useSweep.getState();
  if (st.running || !st.sweep) return;
  if (busy()) {
    st.setError('Pause the current run first: the sweep trains on the same GPU.');
    return;
  }
  st.setError(null);
  st.setStopping(false);
  st.setRunning(true);
  try {
    for (;;) {
      const sweep = useSweep.getState().sweep;
      const i = sweep ? nextSetting(sweep) : -1;
      if (i < 0 || useSweep.getState().stopping) break;
      if ((await trainSetting(i)) === 'stopped') break;
    }
  } catch (e) {
    useSweep.getState().setError(message(e));
  } finally {
    useSweep.getState().setRunning(false);
    useSweep.getState().setStopping(false);
  }
}

/** Plans a new sweep of `grid` (replacing the stored one; its runs stay in the library) and runs it; resolves with why it cannot, or null. */
export async function startSweep(grid: LearnGrid, name: string): Promise<string | null> {
  if (useSweep.getState().running) return 'A sweep is running: stop it first.';
  let sweep: Sweep;
  try {
    sweep = planSweep(grid, name, newRunId().replace(/^run-/, 'sweep-'));
  } catch (e) {
    return message(e);
  }
  useSweep.getState().setSweep(sweep);
  await runSweep();
  return null;
}

/** Stop: the setting in training pauses (kept as started, Resume continues it); no new setting starts. */
export function stopSweep(): void {
  if (!useSweep.getState().running) return;
  useSweep.getState().setStopping(true);
  pauseIfStopping(useStore.getState());
}
