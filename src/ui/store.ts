// Page state (zustand). Plain data and synchronous transitions only; ./controller.ts talks to the
// worker and calls these.
import { create } from 'zustand';

import type { AdapterSummary } from '../gpu/context';
import type { RunConfig } from '../train/config';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import type { InitInfo, TrainResult, TrainUpdate } from '../worker/protocol';
import { runConfigErrors } from './config/parse';
import { DEFAULT_PRESET, uiPreset } from './config/presets';
import type { UploadedText } from './data/upload';
import { DEFAULT_WATCHDOG_SECONDS } from './heartbeat/watchdog';
import type { LibraryEntry } from './library/entry';
import type { RecoveryNote } from './recovery/recovery-policy';
import { type HashConfig, readConfigFromHash } from './url-state';

/** 'probing' may carry a note (a retry after the GPU did not answer); 'unavailable' may be retried. */
export type AdapterState =
  | { status: 'probing'; note?: string }
  | { status: 'ready'; summary: AdapterSummary }
  | { status: 'unavailable'; message: string; retry?: boolean };

/**
 * idle: no run (the config is editable). starting: the worker builds the run. running: a train()
 * call is active. pausing: asked to pause. paused: the run waits. done: all steps trained.
 * error: the run failed (Reset starts over).
 */
export type RunStatus = 'idle' | 'starting' | 'running' | 'pausing' | 'paused' | 'done' | 'error';

export { DEFAULT_WATCHDOG_SECONDS };

/** The last autosave of this page (shown near the run controls); an error is never swallowed. */
export type AutosaveStatus =
  { state: 'saving'; step: number } | { state: 'saved'; step: number; savedAt: string } | { state: 'error'; message: string };

export interface PlaygroundState {
  adapter: AdapterState;
  /** The edited config (mirrored in the URL hash). */
  config: RunConfig;
  /**
   * The last edited config that passed validation (the preset's when the page opened on an invalid
   * one): views that derive geometry from a config (How NSA works) get this, never a draft field
   * value such as seqLen 1e308; an error boundary offers to revert the draft to it.
   */
  validConfig: RunConfig;
  /** Why the URL's config could not be used (the preset shown instead), until the next edit. */
  configNotice: string | null;
  upload: UploadedText | null;

  status: RunStatus;
  /** Bumped by every new run, reset and restart: late answers from an older run are dropped. */
  epoch: number;
  /** The config the current run was built from. */
  runConfig: RunConfig | null;
  /** The run's entry in the run library (its autosaves go there). */
  libraryId: string | null;
  runInfo: InitInfo | null;
  stepsDone: number;
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  heartbeat: Heartbeat | null;
  snapshotSteps: number[];
  error: string | null;
  /** Training time of earlier train() calls (ms) and the start of the active one (performance.now()). */
  activeMs: number;
  runningSince: number | null;
  /** Wall-clock start of the active train() call (Date.now(), the heartbeats' clock). */
  runningSinceWall: number | null;
  /** Step presses (S / Step) made while a step was running, run one after another. */
  queuedSteps: number;
  watchdogSeconds: number;
  /** The step of this run's last autosave (a run continued from a checkpoint starts saved at its step). */
  autosavedStep: number;
  autosave: AutosaveStatus | null;
  /** The library's current run found when the page loaded, offered until continued, dismissed or a run starts. */
  restorable: LibraryEntry | null;
  /** The last recovery of a run from a lost device, a hung GPU, a crashed or stalled worker. */
  recovery: RecoveryNote | null;

  setAdapter(a: AdapterState): void;
  setConfig(c: RunConfig): void;
  /** A config from the URL (page load, a pasted link). */
  loadHashConfig(h: HashConfig): void;
  setUpload(u: UploadedText): void;
  setWatchdogSeconds(s: number): void;
  /** A run is being built from `config`; it autosaves into the library entry `libraryId`. Returns the new epoch. */
  runStarting(config: RunConfig, libraryId: string): number;
  runReady(info: InitInfo): void;
  /** A run continued from a checkpoint is ready: its config replaces the page's, its metrics fill the charts. */
  runResumed(info: InitInfo): void;
  trainingStarted(): void;
  setStatus(status: RunStatus): void;
  setQueuedSteps(n: number): void;
  applyUpdate(u: TrainUpdate): void;
  trainingEnded(r: TrainResult): void;
  /** A chunk of a longer train() ended (an autosave is due): the run stays 'running'. */
  chunkEnded(r: TrainResult): void;
  setAutosave(a: AutosaveStatus | null): void;
  /** This run was autosaved at `step`. */
  autosaved(step: number, savedAt: string): void;
  setRestorable(m: LibraryEntry | null): void;
  setRecovery(r: RecoveryNote | null): void;
  runFailed(message: string): void;
  /** Back to no run, keeping the config; returns the new epoch. */
  clearRun(): number;
}

const EMPTY_RUN = {
  status: 'idle' as RunStatus,
  queuedSteps: 0,
  runConfig: null,
  libraryId: null,
  runInfo: null,
  stepsDone: 0,
  metrics: [] as StepMetrics[],
  evals: [] as EvalMetrics[],
  heartbeat: null,
  snapshotSteps: [] as number[],
  error: null,
  activeMs: 0,
  runningSince: null,
  runningSinceWall: null,
  autosavedStep: 0,
};

/** Training time so far (ms), including the active train() call. */
export function elapsedMs(s: Pick<PlaygroundState, 'activeMs' | 'runningSince'>, now: number = performance.now()): number {
  return s.activeMs + (s.runningSince === null ? 0 : now - s.runningSince);
}

function stopClock(s: PlaygroundState): Pick<PlaygroundState, 'activeMs' | 'runningSince' | 'runningSinceWall'> {
  return { activeMs: elapsedMs(s), runningSince: null, runningSinceWall: null };
}

/** `c` when it passes every check, else `previous`. */
export function nextValidConfig(c: RunConfig, previous: RunConfig): RunConfig {
  return runConfigErrors(c).length === 0 ? c : previous;
}

export function createPlaygroundStore(initial: HashConfig) {
  return create<PlaygroundState>()((set, get) => ({
    adapter: { status: 'probing' },
    config: initial.config,
    validConfig: nextValidConfig(initial.config, uiPreset(DEFAULT_PRESET)),
    configNotice: initial.error ?? null,
    upload: null,
    epoch: 0,
    watchdogSeconds: DEFAULT_WATCHDOG_SECONDS,
    autosave: null,
    restorable: null,
    recovery: null,
    ...EMPTY_RUN,

    setAdapter: (adapter) => set({ adapter }),
    setConfig: (config) => set((s) => ({ config, validConfig: nextValidConfig(config, s.validConfig), configNotice: null })),
    loadHashConfig: (h) =>
      set((s) => ({ config: h.config, validConfig: nextValidConfig(h.config, s.validConfig), configNotice: h.error ?? null })),
    setUpload: (upload) => set({ upload }),
    setWatchdogSeconds: (watchdogSeconds) => set({ watchdogSeconds }),
    runStarting: (config, libraryId) => {
      const epoch = get().epoch + 1;
      set({ ...EMPTY_RUN, epoch, status: 'starting', runConfig: config, libraryId, autosave: null, restorable: null });
      return epoch;
    },
    runReady: (runInfo) => set({ runInfo, heartbeat: runInfo.heartbeat, status: 'paused' }),
    runResumed: (runInfo) =>
      set({
        runInfo,
        heartbeat: runInfo.heartbeat,
        config: runInfo.config,
        validConfig: runInfo.config,
        configNotice: null,
        runConfig: runInfo.config,
        stepsDone: runInfo.stepsDone,
        metrics: runInfo.metrics,
        evals: runInfo.evals,
        autosavedStep: runInfo.stepsDone,
        status: runInfo.stepsDone >= runInfo.config.train.steps ? 'done' : 'paused',
      }),
    trainingStarted: () => set({ status: 'running', runningSince: performance.now(), runningSinceWall: Date.now() }),
    setStatus: (status) => set({ status }),
    setQueuedSteps: (queuedSteps) => set({ queuedSteps }),
    applyUpdate: (u) =>
      set((s) => {
        const metrics = u.metrics.length ? [...s.metrics, ...u.metrics] : s.metrics;
        const evals = u.evals.length ? [...s.evals, ...u.evals] : s.evals;
        const last = metrics.at(-1);
        return {
          metrics,
          evals,
          heartbeat: u.heartbeat ?? s.heartbeat,
          snapshotSteps: u.snapshotSteps ?? s.snapshotSteps,
          stepsDone: last ? Math.max(s.stepsDone, last.step + 1) : s.stepsDone,
        };
      }),
    trainingEnded: (r) =>
      set((s) => ({
        ...stopClock(s),
        // A train() call is 'done' when it ran its steps (one, for Step); the run is done at config.train.steps.
        status: r.end === 'stopped' ? 'idle' : r.stepsDone >= (s.runConfig?.train.steps ?? Infinity) ? 'done' : 'paused',
        stepsDone: r.stepsDone,
        heartbeat: r.heartbeat ?? s.heartbeat,
      })),
    chunkEnded: (r) => set((s) => ({ stepsDone: r.stepsDone, heartbeat: r.heartbeat ?? s.heartbeat })),
    setAutosave: (autosave) => set({ autosave }),
    autosaved: (step, savedAt) => set({ autosavedStep: step, autosave: { state: 'saved', step, savedAt } }),
    setRestorable: (restorable) => set({ restorable }),
    setRecovery: (recovery) => set({ recovery }),
    runFailed: (error) => set((s) => ({ ...stopClock(s), status: 'error', error })),
    clearRun: () => {
      const epoch = get().epoch + 1;
      set({ ...EMPTY_RUN, epoch, autosave: null }); // a save in flight for the old run is dropped
      return epoch;
    },
  }));
}

export type PlaygroundStore = ReturnType<typeof createPlaygroundStore>;

/** The page's store; the config starts from the URL hash. */
export const useStore: PlaygroundStore = createPlaygroundStore(readConfigFromHash());
