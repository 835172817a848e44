// Connects the page to the trainer worker: every GPU call happens there, the page only renders.
// Each action checks the store's epoch after awaiting, so answers from a run that was reset or
// restarted meanwhile are dropped.
import type { BenchRow } from '../bench/bench-sizes';
import type { SelectionSnapshot } from '../definitions/selection-snapshot';
import { decodeCheckpoint, type TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import type { RunConfig } from '../train/config';
import {
  type BenchRequest,
  checkpointData,
  type DataSpec,
  defaultSnapshotEvery,
  type ExportFiles,
  type GenerateRequest,
  type GenerateResult,
  type GenerateStart,
  type StreamedToken,
  type TrainOptions,
} from '../worker/protocol';
import type { TestFault } from '../worker/session';
import { AUTOSAVE_EVERY, autosaveChunk, unsavedSteps } from './autosave-policy';
import { runConfigErrors } from './config/parse';
import { dataProblem } from './data/DataPanel';
import type { UploadedText } from './data/upload';
import { autosaveRun } from './library/autosave-run';
import { checkpointFileName, newRunId } from './library/entry';
import { libraryAction, libraryStorage, showSaved } from './library/library-actions';
import { useLibrary } from './library/library-state';
import { storageErrorMessage } from './library/storage-errors';
import { MAX_AUTO_RECOVERIES, recoverableCause, type RecoveryCause } from './recovery/recovery-policy';
import { rateFor } from './run/calibration';
import { notACheckpoint } from './run/checkpoint-file';
import { slowRunQuestion } from './run/step-estimate';
import { useStore } from './store';
import { cancelWorkerRun, dropWorker, onWorkerDeviceLost, probeAdapter, worker } from './worker-handle';

export { probeAdapter };

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The page was opened with ?testHooks=1: the e2e suite may make the worker stall. */
export const TEST_HOOKS: boolean = typeof location !== 'undefined' && new URLSearchParams(location.search).get('testHooks') === '1';

/** Snapshot every K steps: about 64 over the run (the worker thins them to its budget). */
export const snapshotEvery: (c: RunConfig) => number = defaultSnapshotEvery;

/** The worker's data for a config (a task travels in the config: data.recall, data.passkey). */
export function dataSpecFor(c: RunConfig, upload: UploadedText | null): DataSpec | null {
  switch (c.data.source) {
    case 'brown':
      return { kind: 'brown' };
    case 'upload':
      return upload ? { kind: 'upload', name: upload.name, text: upload.text } : null;
    case 'copy':
      return { kind: 'copy' };
    case 'random':
      return { kind: 'random' };
    case 'recall':
      return { kind: 'recall' };
    case 'passkey':
      return { kind: 'passkey' };
  }
}

/** Why a run cannot start with this config and data (field messages are shown by the config panel). */
export function startProblems(c: RunConfig, upload: UploadedText | null): string[] {
  const out = runConfigErrors(c).map((e) => `${e.field}: ${e.message}`);
  const data = dataProblem(c.data, upload);
  if (data) out.push(data);
  return out;
}

/** Drops the worker (./worker-handle) and the checkpoint reads queued on it (they would never answer). */
async function replaceWorker(): Promise<void> {
  checkpointQueue = Promise.resolve();
  await dropWorker();
}

/** The last cancellation of the worker's run (Reset, Continue): a new run starts after it. */
let settling: Promise<void> = Promise.resolve();

/**
 * Ends the worker's run and any step in flight (Reset, Continue): a step that does not end within
 * STEP_CANCEL_MS takes the worker and its device with it (./worker-handle's cancelWorkerRun), so
 * the next run never waits behind it. The next run starts after this.
 */
function cancelStepInFlight(): Promise<void> {
  const p = settling.then(async () => {
    if ((await cancelWorkerRun()) === 'dropped') checkpointQueue = Promise.resolve(); // reads queued on the dropped worker never answer
  });
  settling = p.catch(() => {});
  return p;
}

/** Builds the run when there is none (a new run-library entry `libraryId`). Resolves true when a run is ready to train. */
async function ensureRun(libraryId: string): Promise<boolean> {
  await settling; // a reset run's step in flight is over, or its worker dropped
  const s = useStore.getState();
  if (s.status === 'paused') return true;
  if (s.status !== 'idle') return false;
  const data = dataSpecFor(s.config, s.upload);
  if (!data || startProblems(s.config, s.upload).length) return false;
  const question = slowRunQuestion(s.config, s.adapter.status === 'ready' ? s.adapter.summary.software : true, rateFor(s.adapter));
  if (question && !window.confirm(question)) return false;
  const config = structuredClone(s.config);
  if (useLibrary.getState().undo?.kind === 'reset') useLibrary.getState().setUndo(null); // a new run replaces the reset one
  const epoch = s.runStarting(config, libraryId);
  try {
    const info = await worker().init({ config, data, snapshotEvery: snapshotEvery(config), testHooks: TEST_HOOKS });
    if (useStore.getState().epoch !== epoch) return false;
    useStore.getState().runReady(info);
    return true;
  } catch (e) {
    if (useStore.getState().epoch === epoch) useStore.getState().runFailed(message(e));
    return false;
  }
}

/**
 * Checkpoint reads (autosaves and downloads) one after another, never during a train() call: the
 * worker refuses a checkpoint while training, and train() waits for this queue.
 */
let checkpointQueue: Promise<unknown> = Promise.resolve();

function queued<T>(f: () => Promise<T>): Promise<T> {
  const p = checkpointQueue.then(f);
  checkpointQueue = p.catch(() => {});
  return p;
}

/** Set by pause(): a train() between two chunks (saving) stops instead of going on. */
let pauseWanted = false;

/**
 * Saves the current run (checkpoint and history) into its run-library entry when it has steps not
 * saved yet; only between train() calls. Failures are shown next to the run controls.
 */
function autosave(epoch: number): Promise<void> {
  return queued(() =>
    autosaveRun(
      {
        store: useStore,
        storage: libraryStorage,
        snapshot: async () => ({ checkpoint: await worker().checkpoint(), history: await worker().history() }),
        onSaved: showSaved,
      },
      epoch,
    ),
  );
}

/** Autosaves a paused or finished run that has unsaved steps (the tab was hidden). */
export function autosaveIfIdle(): Promise<void> {
  const s = useStore.getState();
  if ((s.status === 'paused' || s.status === 'done') && unsavedSteps(s) > 0) return autosave(s.epoch);
  return Promise.resolve();
}

/**
 * Trains `steps` more steps in chunks ending at multiples of AUTOSAVE_EVERY, autosaving between them
 * and at the end; `opts.stopAtAccuracy` pauses the run at the first evaluation that reaches it.
 */
async function train(steps: number, opts: TrainOptions = {}): Promise<void> {
  const epoch = useStore.getState().epoch;
  const live = () => useStore.getState().epoch === epoch;
  await checkpointQueue;
  if (!live() || useStore.getState().status !== 'paused') return; // another call started meanwhile
  useStore.getState().trainingStarted();
  pauseWanted = false;
  let left = steps;
  try {
    for (;;) {
      const before = useStore.getState().stepsDone;
      const r = await worker().train(
        autosaveChunk(before, left, AUTOSAVE_EVERY),
        (u) => {
          if (live()) useStore.getState().applyUpdate(u);
        },
        opts,
      );
      if (!live()) return;
      autoRecoveries = 0;
      left -= r.stepsDone - before;
      if (r.end === 'done' && left > 0 && !pauseWanted) {
        useStore.getState().chunkEnded(r);
        await autosave(epoch);
        if (!live()) return;
        if (!pauseWanted) continue;
        useStore.getState().trainingEnded({ ...r, end: 'paused' });
        return;
      }
      useStore.getState().trainingEnded(r);
      if (r.end !== 'stopped') void autosave(epoch);
      return;
    }
  } catch (e) {
    if (!live()) return;
    const cause = recoverableCause(e);
    useStore.getState().runFailed(message(e));
    if (cause && autoRecoveries < MAX_AUTO_RECOVERIES) {
      autoRecoveries++;
      await recoverRun(cause, message(e));
    }
  }
}

/** The options of the last run() (a recovered run goes on with them: a sweep's early stop). */
let lastRunOptions: TrainOptions = {};

/**
 * Trains until config.train.steps (building the run first when there is none, as library entry
 * `libraryId`), or until `opts.stopAtAccuracy` is reached at an evaluation (a sweep's target).
 */
export async function run(libraryId: string = newRunId(), opts: TrainOptions = {}): Promise<void> {
  lastRunOptions = opts;
  if (!(await ensureRun(libraryId))) return;
  const s = useStore.getState();
  const left = (s.runConfig?.train.steps ?? 0) - s.stepsDone;
  if (s.status === 'paused' && left > 0) await train(left, opts);
}

let stepping = false;

/**
 * One optimizer step (building the run first when there is none). A press while a step runs is
 * queued (shown as pending) and runs after it, each press one step.
 */
export async function stepOnce(): Promise<void> {
  if (stepping) {
    useStore.getState().setQueuedSteps(useStore.getState().queuedSteps + 1);
    return;
  }
  stepping = true;
  try {
    if (!(await ensureRun(newRunId()))) return;
    for (;;) {
      const s = useStore.getState();
      if (!(s.status === 'paused' && s.stepsDone < (s.runConfig?.train.steps ?? 0))) return;
      await train(1);
      const queued = useStore.getState().queuedSteps;
      if (queued <= 0) return;
      useStore.getState().setQueuedSteps(queued - 1);
    }
  } finally {
    stepping = false;
    useStore.getState().setQueuedSteps(0);
  }
}

export async function pause(): Promise<void> {
  if (useStore.getState().status !== 'running') return;
  useStore.getState().setStatus('pausing');
  pauseWanted = true;
  await worker().pause();
}

/** Run when idle or paused, pause when running (the Space shortcut). */
export async function toggleRun(): Promise<void> {
  const st = useStore.getState().status;
  if (st === 'running') await pause();
  else if (st === 'idle' || st === 'paused') await run();
}

/** Steps a reload or Reset would lose (not yet autosaved). */
export function unsavedRunSteps(): number {
  return unsavedSteps(useStore.getState());
}

/** The question before a pasted link replaces the held run with a new run draft (App's hash sync). */
export function newLinkQuestion(): string {
  const n = unsavedRunSteps();
  return (
    "This tab holds a run. Open the link's configuration as a new run draft? The current run is reset" +
    (n > 0 ? `, and its ${n} trained step${n === 1 ? '' : 's'} not autosaved yet are lost.` : '; its autosave stays in the run library.')
  );
}

/** Reset, after a confirmation when the run has steps not yet autosaved (the button and the R key). */
export async function confirmReset(): Promise<void> {
  const n = unsavedRunSteps();
  if (n > 0 && !window.confirm(`Discard this run? ${n} trained step${n === 1 ? ' is' : 's are'} not autosaved yet.`)) return;
  await reset();
}

/**
 * Discards the run (mid-run too) and frees its GPU memory; the config stays. A run with an
 * autosave stays in the run library, and the page offers "Undo reset" (continue from it).
 */
export async function reset(): Promise<void> {
  const { libraryId, status } = useStore.getState();
  const saved = status === 'idle' ? undefined : useLibrary.getState().entries.find((e) => e.id === libraryId);
  if (saved) useLibrary.getState().setUndo({ kind: 'reset', id: saved.id, name: saved.name, step: saved.stepsDone });
  useStore.getState().clearRun();
  useStore.getState().setRecovery(null);
  await cancelStepInFlight();
}

/**
 * Terminates the worker (a stalled GPU call or a blocked thread included) after asking it to
 * destroy its device, and gets a fresh worker and device. A run continues from its last autosave
 * (recoverRun); without a run the config stays and the page waits for Run.
 */
export async function restartWorker(cause: RecoveryCause = 'restart', detail = 'The worker was restarted.'): Promise<void> {
  const s = useStore.getState();
  if (s.runConfig && s.status !== 'idle') return recoverRun(cause, detail);
  await replaceWorker();
  s.clearRun();
  s.setAdapter({ status: 'probing' });
  await probeAdapter();
}

/** Automatic recoveries since a chunk last trained normally (MAX_AUTO_RECOVERIES stops a loop). */
let autoRecoveries = 0;
/** A recovery in progress: a second request (the watchdog and a crash at once) joins it. */
let recovering: Promise<void> | null = null;

/**
 * Restarts the worker with a fresh device and continues the run from its run-library entry (its
 * last autosave; at most one autosave interval is trained again), or, with no autosave yet, starts
 * it again from step 0 with its config. A run that was training goes on training.
 */
export function recoverRun(cause: RecoveryCause, detail: string): Promise<void> {
  recovering ??= recoverNow(cause, detail).finally(() => (recovering = null));
  return recovering;
}

async function recoverNow(cause: RecoveryCause, detail: string): Promise<void> {
  const before = useStore.getState();
  const { runConfig, libraryId, stepsDone } = before;
  // A train() that failed (status 'error' by then) or stalled was training; a pause asked meanwhile holds.
  const keepTraining = (before.status === 'running' || before.status === 'error') && !pauseWanted;
  const note = { cause, detail, lostAtStep: stepsDone, resumedAtStep: null };
  useStore.getState().setRecovery({ ...note, state: 'recovering' });
  await replaceWorker();
  useStore.getState().clearRun();
  useStore.getState().setAdapter({ status: 'probing' });
  await probeAdapter();
  const fail = (failure: string) => useStore.getState().setRecovery({ ...note, state: 'failed', failure });
  if (useStore.getState().adapter.status !== 'ready') return fail('no WebGPU device (see the GPU panel).');
  if (!runConfig || !libraryId) return fail('the run had no config.');
  let saved: { bytes: Uint8Array; file: string } | null = null;
  try {
    const entry = await libraryStorage.entry(libraryId);
    const bytes = entry ? await libraryStorage.checkpoint(libraryId) : null;
    if (entry && bytes) saved = { bytes, file: checkpointFileName(entry) };
  } catch (e) {
    return fail(storageErrorMessage('Reading the autosave', e));
  }
  if (saved) {
    const error = await continueFromBytes(saved.bytes, saved.file, libraryId);
    if (error) return fail(error);
  } else {
    useStore.getState().setConfig(structuredClone(runConfig));
    if (!(await ensureRun(libraryId))) return fail(useStore.getState().error ?? 'the run could not be built again.');
  }
  useStore.getState().setRecovery({ ...note, state: 'recovered', resumedAtStep: useStore.getState().stepsDone });
  if (keepTraining) void run(libraryId, lastRunOptions); // not awaited: a later failure must be able to start its own recovery
}

/** A kept training snapshot (the stepper's loader). */
export function loadSnapshot(step: number, layer: number, group: number): Promise<SelectionSnapshot | null> {
  return worker().snapshot(step, layer, group);
}

/** Generates from the current weights; tokens stream to `onTokens` (≤ 10 calls per second). */
export function generate(
  req: GenerateRequest,
  onStart: (s: GenerateStart) => void,
  onTokens: (t: StreamedToken[]) => void,
): Promise<GenerateResult> {
  return worker().generate(req, onStart, onTokens);
}

export function cancelGeneration(): Promise<void> {
  return worker().cancelGenerate();
}

/** The NSA-vs-dense benchmark on the worker's device (the page's benchmark view). */
export function runBenchmark(req: BenchRequest, onLine: (line: BenchRow) => void): Promise<void> {
  return worker().benchmark(req, onLine);
}

export function cancelBenchmark(): Promise<void> {
  return worker().cancelBenchmark();
}

/** The run's checkpoint file (the CLI's checkpoint.safetensors format); only while paused or done. */
export function runCheckpoint(): Promise<Uint8Array> {
  return queued(() => worker().checkpoint());
}

/**
 * Starts a run from a checkpoint file (CLI- or page-made), replacing any run that is not training:
 * its config replaces the page's, its metrics fill the charts, and it waits paused at its step.
 * Resolves with why it failed (the file and the field, for a broken file), or null.
 */
export async function continueFromCheckpoint(file: File): Promise<string | null> {
  if (busy()) return 'Pause or reset the current run first.';
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await file.arrayBuffer());
  } catch (e) {
    return `Cannot read ${file.name}: ${message(e)}`;
  }
  // Refused before the held run is touched: not a checkpoint at all, then a broken one (decoded in full).
  const refusal = notACheckpoint(bytes, file.name);
  if (refusal) return refusal;
  let checkpoint: TrainingCheckpoint;
  try {
    checkpoint = decodeCheckpoint(bytes, { file: file.name });
  } catch (e) {
    return message(e);
  }
  try {
    checkpointData(checkpoint.config, offeredData(), file.name); // an uploaded-text run needs its .txt picked first
  } catch (e) {
    return message(e);
  }
  if (busy()) return 'Pause or reset the current run first.';
  const question = replaceRunQuestion(file.name, checkpoint.state.stepsDone);
  if (question && !window.confirm(question)) return null;
  return continueFromBytes(bytes, file.name, newRunId());
}

/** The question before a checkpoint file replaces the held run (null when no run is held). */
export function replaceRunQuestion(file: string, checkpointStep: number): string | null {
  const s = useStore.getState();
  if (s.status === 'idle' || s.runConfig === null) return null;
  const n = unsavedRunSteps();
  return (
    `Replace the current run (step ${s.stepsDone}) with ${file}'s run at step ${checkpointStep}? ` +
    (n > 0 ? `Its ${n} trained step${n === 1 ? '' : 's'} not autosaved yet are lost.` : 'Its autosave stays in the run library.')
  );
}

export function busy(): boolean {
  const st = useStore.getState().status;
  return st === 'starting' || st === 'running' || st === 'pausing';
}

/** The worker rebuilds a checkpoint's data from its config; only an uploaded text must come from the page. */
function offeredData(): DataSpec {
  const u = useStore.getState().upload;
  return u ? { kind: 'upload', name: u.name, text: u.text } : { kind: 'random' };
}

/** Continues a checkpoint file's run (paused at its step); it autosaves into library entry `libraryId`. */
async function continueFromBytes(bytes: Uint8Array, name: string, libraryId: string): Promise<string | null> {
  await cancelStepInFlight(); // the held run's step in flight, if any, ends or takes its worker with it
  const s = useStore.getState();
  const data = offeredData();
  const epoch = useStore.getState().runStarting(structuredClone(s.config), libraryId);
  try {
    const info = await worker().init({
      config: structuredClone(s.config),
      data,
      snapshotEvery: 0,
      testHooks: TEST_HOOKS,
      checkpoint: bytes,
      checkpointFile: name,
    });
    if (useStore.getState().epoch === epoch) useStore.getState().runResumed(info);
    return null;
  } catch (e) {
    if (useStore.getState().epoch !== epoch) return null;
    useStore.getState().clearRun();
    return message(e);
  }
}

/** Looks for the run an earlier page autosaved last (the library's current run); the page offers it (Continue / Dismiss). */
export async function findAutosave(): Promise<void> {
  try {
    const id = await libraryStorage.current();
    const entry = id === null ? null : await libraryStorage.entry(id);
    if (entry && useStore.getState().status === 'idle') useStore.getState().setRestorable(entry);
  } catch (e) {
    useStore.getState().setAutosave({ state: 'error', message: storageErrorMessage('Reading the autosave', e) });
  }
}

/**
 * Continues a run of the library (paused at its step), as "Continue from checkpoint…" does with a
 * file; its later autosaves update the same entry. Asks first when the current run has steps not
 * autosaved. Resolves with why it failed, or null.
 */
export async function continueFromLibrary(id: string): Promise<string | null> {
  if (busy()) return 'Pause or reset the current run first.';
  const n = unsavedRunSteps();
  if (n > 0 && !window.confirm(`Replace the current run? ${n} trained step${n === 1 ? ' is' : 's are'} not autosaved yet.`)) return null;
  let bytes: Uint8Array | null;
  let file: string;
  try {
    const entry = await libraryStorage.entry(id);
    bytes = await libraryStorage.checkpoint(id);
    if (!entry || !bytes) return 'This run is no longer in the library (deleted in another tab?).';
    file = checkpointFileName(entry);
  } catch (e) {
    return storageErrorMessage('Reading the run', e);
  }
  const error = await continueFromBytes(bytes, file, id);
  if (!error) await libraryAction('Marking the run as current', () => libraryStorage.setCurrent(id));
  return error;
}

/** Continues the autosaved run offered after a reload (paused at its step). */
export async function continueFromAutosave(): Promise<void> {
  const r = useStore.getState().restorable;
  if (!r || busy()) return;
  const error = await continueFromLibrary(r.id);
  if (error) useStore.getState().setAutosave({ state: 'error', message: `Cannot continue the autosave: ${error}` });
}

/** Hides the reload banner for good (the run stays in the run library). */
export async function dismissAutosave(): Promise<void> {
  try {
    await libraryStorage.setCurrent(null);
    useStore.getState().setRestorable(null);
  } catch (e) {
    useStore.getState().setAutosave({ state: 'error', message: storageErrorMessage('Dismissing the autosave', e) });
  }
}

/** "Undo reset": continues the reset run from its library entry. */
export async function undoReset(): Promise<void> {
  const u = useLibrary.getState().undo;
  if (u?.kind !== 'reset') return;
  const error = await continueFromLibrary(u.id);
  if (error) useLibrary.getState().setError(`Undo reset failed: ${error}`);
  else useLibrary.getState().setUndo(null);
}

export function exportRunFiles(): Promise<ExportFiles> {
  return worker().exportFiles();
}

/**
 * A lost device reported by the worker: a run held while paused or done continues from its last
 * autosave at once (a training one fails its train() call, which recovers it).
 */
onWorkerDeviceLost((detail) => {
  const st = useStore.getState().status;
  if (st === 'paused' || st === 'done') void recoverRun('device-lost', detail);
});

/** Test hook (?testHooks=1): the worker destroys its device now. */
export function debugLoseDevice(): Promise<void> {
  return worker().debugLoseDevice();
}

/** Test hook (?testHooks=1): a device loss or a blocked worker thread before a given step. */
export function debugFault(fault: TestFault): Promise<void> {
  return worker().debugFault(fault);
}

/** Test hook (?testHooks=1): the worker's next step waits `ms` first. */
export function debugStall(ms: number): Promise<void> {
  return worker().debugStall(ms);
}
