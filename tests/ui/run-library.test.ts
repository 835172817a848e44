// The page's run library on IndexedDB (fake-indexeddb in Node): save / list / rename / delete and
// restore, the current run, the upgrade from the one-record autosave (version 1), imports refused
// with the file and field named and nothing stored, and storage failures (a full quota) reported
// in the page's state, never silent, with the previous save left whole.
import 'fake-indexeddb/auto';

import { openDB } from 'idb';
import { beforeEach, describe, expect, it } from 'vitest';

import { numel, paramSpecs } from '../../src/definitions/params';
import { encodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import type { RunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { StepMetrics } from '../../src/train/types';
import { autosaveRun } from '../../src/ui/library/autosave-run';
import { bestValLoss, newRunId, parseTags } from '../../src/ui/library/entry';
import { annotateRun, deleteRun, importCheckpointFile, renameRun, undoDelete } from '../../src/ui/library/library-actions';
import { createLibraryStore } from '../../src/ui/library/library-state';
import { IndexedDbRunStorage, LIBRARY_DB_VERSION, type RunSave } from '../../src/ui/library/run-storage';
import { isQuotaError, storageErrorMessage } from '../../src/ui/library/storage-errors';
import { createPlaygroundStore } from '../../src/ui/store';
import type { InitInfo } from '../../src/worker/protocol';

const metric = (step: number, loss = 5 - step / 10): StepMetrics => ({
  step,
  loss,
  lr: 1e-3,
  gradNorm: 1,
  tokensPerSecond: 100,
  stepMs: 1,
  elapsedMs: step,
});

function checkpointBytes(config: RunConfig, steps: number): Uint8Array {
  const zeros = () => new Map(paramSpecs(config.model).map((s) => [s.name, new Float32Array(numel(s.shape))]));
  return encodeCheckpoint({
    config,
    state: { stepsDone: steps, batchesDrawn: steps },
    params: zeros(),
    adamM: zeros(),
    adamV: zeros(),
    metrics: Array.from({ length: steps }, (_, i) => metric(i)),
    evals: [{ step: steps, valLoss: 4.5 }],
    reason: 'final',
    savedAt: '2026-01-02T03:04:05.000Z',
  });
}

const tiny = preset('tiny');
tiny.model.attention = 'dense';
tiny.train.steps = 6;

function save(id: string, steps: number, savedAt: string): RunSave {
  return {
    id,
    config: tiny,
    stepsDone: steps,
    history: { metrics: Array.from({ length: steps }, (_, i) => metric(i)), evals: [{ step: steps, valLoss: 5 - steps / 10 }] },
    checkpoint: new Uint8Array([steps, 1, 2, 3]),
    savedAt,
  };
}

const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

let dbName = '';
let storage: IndexedDbRunStorage;
beforeEach(() => {
  dbName = `lib-${newRunId()}`; // a fresh database per test
  storage = new IndexedDbRunStorage(dbName);
});

describe('run storage (IndexedDB)', () => {
  it('saves runs apart (entry, history, checkpoint), lists them, and keeps a rename across later saves', async () => {
    const a = await storage.save(save('a', 2, '2026-01-01T00:00:00.000Z'), { current: true });
    expect(a).toMatchObject({ id: 'a', stepsDone: 2, preset: 'tiny', bestValLoss: 4.8, checkpointBytes: 4, origin: 'page' });
    expect(a.name).toMatch(/^tiny dense \d\d:\d\d:\d\d$/);
    expect(a.summary).toContain('6 steps');
    await storage.save(save('b', 3, '2026-01-01T00:01:00.000Z'), { current: false });
    expect((await storage.list()).map((e) => e.id).sort()).toEqual(['a', 'b']);
    expect(await storage.current()).toBe('a');
    expect((await storage.history('b'))?.metrics).toHaveLength(3);
    expect(Array.from((await storage.checkpoint('b'))!)).toEqual([3, 1, 2, 3]);

    const renamed = await storage.rename('a', 'baseline');
    expect(renamed.name).toBe('baseline');
    const resaved = await storage.save(save('a', 4, '2026-01-01T00:02:00.000Z'), { current: true });
    expect(resaved).toMatchObject({ name: 'baseline', stepsDone: 4, createdAt: '2026-01-01T00:00:00.000Z' });
    await expect(storage.rename('nope', 'x')).rejects.toThrow(/No run nope/);
  });

  it('keeps notes and tags (trimmed; empty ones dropped) across later saves', async () => {
    await storage.save(save('a', 2, '2026-01-01T00:00:00.000Z'), { current: true });
    await annotateRun('a', '  lr 3e-3 diverged at 400 ', ' baseline, lr-sweep,, baseline ', storage, createLibraryStore());
    expect(await storage.entry('a')).toMatchObject({ notes: 'lr 3e-3 diverged at 400', tags: ['baseline', 'lr-sweep'] });
    const resaved = await storage.save(save('a', 4, '2026-01-01T00:02:00.000Z'), { current: true });
    expect(resaved).toMatchObject({ stepsDone: 4, notes: 'lr 3e-3 diverged at 400', tags: ['baseline', 'lr-sweep'] });
    const cleared = await storage.annotate('a', '  ', []);
    expect('notes' in cleared || 'tags' in cleared).toBe(false);
    expect(parseTags('a, b ,a,' + 'x'.repeat(50))).toEqual(['a', 'b', 'x'.repeat(40)]);
    await expect(storage.annotate('nope', 'x', [])).rejects.toThrow(/No run nope/);
  });

  it('remove returns the whole run (and clears the current pointer); restore puts it back as it was', async () => {
    await storage.save(save('a', 2, '2026-01-01T00:00:00.000Z'), { current: true });
    const r = await storage.remove('a');
    expect(r?.entry.id).toBe('a');
    expect(await storage.list()).toEqual([]);
    expect(await storage.current()).toBeNull();
    expect(await storage.checkpoint('a')).toBeNull();
    await storage.restore(r!);
    expect(await storage.entry('a')).toEqual(r!.entry);
    expect(Array.from((await storage.checkpoint('a'))!)).toEqual([2, 1, 2, 3]);
    expect(await storage.remove('missing')).toBeNull();
  });

  it("a failed write (quota) changes nothing: the previous save stays whole and the error is the browser's", async () => {
    await storage.save(save('a', 2, '2026-01-01T00:00:00.000Z'), { current: true });
    storage.failNextWrite(quota());
    await expect(storage.save(save('a', 4, '2026-01-01T00:02:00.000Z'), { current: true })).rejects.toSatisfy(isQuotaError);
    expect((await storage.entry('a'))?.stepsDone).toBe(2);
    expect((await storage.history('a'))?.metrics).toHaveLength(2);
    // One fault per injection: the next save succeeds.
    expect((await storage.save(save('a', 4, '2026-01-01T00:02:00.000Z'), { current: true })).stepsDone).toBe(4);
  });

  it("upgrades version 1's one autosave record into the library as the current run", async () => {
    const bytes = checkpointBytes(tiny, 3);
    const v1 = await openDB(dbName, 1, { upgrade: (d) => void d.createObjectStore('runs') });
    await v1.put(
      'runs',
      { bytes, name: 'tiny-step3.safetensors', savedAt: '2026-01-02T03:04:05.000Z', stepsDone: 3, summary: 'x' },
      'autosave',
    );
    v1.close();
    const id = await storage.current();
    expect(id).not.toBeNull();
    const e = await storage.entry(id!);
    expect(e).toMatchObject({ stepsDone: 3, bestValLoss: 4.5, savedAt: '2026-01-02T03:04:05.000Z', checkpointBytes: bytes.length });
    expect((await storage.history(id!))?.metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    expect((await storage.checkpoint(id!))?.length).toBe(bytes.length);
    const db = await openDB(dbName, LIBRARY_DB_VERSION);
    expect([...db.objectStoreNames].sort()).toEqual(['checkpoints', 'histories', 'library', 'state']); // 'runs' is gone
    db.close();
  });
  it('an upgrade held up by an older page (a version-1 connection left open) fails, saying so', async () => {
    const v1 = await openDB(dbName, 1, { upgrade: (d) => void d.createObjectStore('runs') });
    await expect(storage.list()).rejects.toThrow(/held open by an older version of this page in another tab/);
    v1.close();
  });
});

describe('library actions', () => {
  const file = (name: string, bytes: Uint8Array) => ({ name, bytes: async () => bytes });

  it('import: a valid checkpoint becomes an entry; a broken one is refused naming the file and the field, nothing stored', async () => {
    const lib = createLibraryStore();
    const good = checkpointBytes(tiny, 3);
    const e = await importCheckpointFile(file('cli-run.safetensors', good), storage, lib);
    expect(e).toMatchObject({ name: 'cli-run', origin: 'import', stepsDone: 3, bestValLoss: 4.5 });
    expect(lib.getState().entries.map((x) => x.id)).toEqual([e!.id]);

    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['short.safetensors', good.subarray(0, 6), /^Not imported: short\.safetensors: header length: /],
      ['cut.safetensors', good.subarray(0, good.length - 4), /^Not imported: cut\.safetensors: (param|adam|metrics|evals)\S*: .*truncated/],
    ];
    for (const [name, bytes, want] of cases) {
      expect(await importCheckpointFile(file(name, bytes), storage, lib)).toBeNull();
      expect(lib.getState().error).toMatch(want);
    }
    expect((await storage.list()).map((x) => x.id)).toEqual([e!.id]); // nothing else stored
  });

  it('import into a full storage: the quota error is shown, nothing stored', async () => {
    const lib = createLibraryStore();
    storage.failNextWrite(quota());
    expect(await importCheckpointFile(file('a.safetensors', checkpointBytes(tiny, 2)), storage, lib)).toBeNull();
    expect(lib.getState().error).toMatch(/^Importing a\.safetensors failed: the browser's storage for this page is full/);
    expect(await storage.list()).toEqual([]);
  });

  it('rename, delete, undo delete', async () => {
    const lib = createLibraryStore();
    lib.getState().setEntries([await storage.save(save('a', 2, '2026-01-01T00:00:00.000Z'), { current: false })]);
    lib.getState().setCompare(['a']);
    await renameRun('a', '  dense baseline ', storage, lib);
    expect(lib.getState().entries[0].name).toBe('dense baseline');
    await renameRun('a', '   ', storage, lib);
    expect(lib.getState().error).toMatch(/cannot be empty/);
    expect((await storage.entry('a'))?.name).toBe('dense baseline');

    await deleteRun('a', storage, lib);
    expect(lib.getState().entries).toEqual([]);
    expect(lib.getState().compare).toEqual([]);
    expect(lib.getState().undo?.kind).toBe('delete');
    await undoDelete(storage, lib);
    expect(lib.getState().undo).toBeNull();
    expect(lib.getState().entries.map((e) => e.name)).toEqual(['dense baseline']);
    expect((await storage.history('a'))?.metrics).toHaveLength(2);
  });
});

describe('autosave into the library', () => {
  const info = { config: tiny, stepsDone: 0, metrics: [], evals: [], heartbeat: null } as unknown as InitInfo;

  function pausedRun(steps: number) {
    const store = createPlaygroundStore({ config: tiny, preset: 'tiny' });
    const epoch = store.getState().runStarting(tiny, 'run-1');
    store.getState().runReady(info);
    store.getState().trainingStarted();
    store
      .getState()
      .applyUpdate({ metrics: Array.from({ length: steps }, (_, i) => metric(i)), evals: [], heartbeat: null, snapshotSteps: null });
    store.getState().trainingEnded({ end: 'paused', stepsDone: steps, last: null, heartbeat: null });
    return { store, epoch };
  }
  const deps = (store: ReturnType<typeof pausedRun>['store'], saved: string[]) => ({
    store,
    storage,
    snapshot: async () => ({ checkpoint: new Uint8Array([9]), history: { metrics: store.getState().metrics, evals: [] } }),
    onSaved: (e: { id: string }) => saved.push(e.id),
  });

  it("saves the run into its own entry (the current run), and the page's state says so", async () => {
    const { store, epoch } = pausedRun(3);
    const saved: string[] = [];
    await autosaveRun(deps(store, saved), epoch);
    expect(store.getState()).toMatchObject({ autosavedStep: 3, autosave: { state: 'saved', step: 3 } });
    expect(saved).toEqual(['run-1']);
    expect(await storage.current()).toBe('run-1');
    expect((await storage.history('run-1'))?.metrics).toHaveLength(3);
    await autosaveRun(deps(store, saved), epoch); // nothing new: no second write
    expect(saved).toEqual(['run-1']);
  });

  it('a full quota is reported next to the run controls (never silent); the steps stay unsaved', async () => {
    const { store, epoch } = pausedRun(3);
    storage.failNextWrite(quota());
    const saved: string[] = [];
    await autosaveRun(deps(store, saved), epoch);
    const a = store.getState().autosave;
    expect(a?.state).toBe('error');
    expect(a?.state === 'error' && a.message).toMatch(
      /^Autosave failed: the browser's storage for this page is full \(QuotaExceededError\)/,
    );
    expect(store.getState().autosavedStep).toBe(0);
    expect(saved).toEqual([]);
    expect(await storage.list()).toEqual([]);
  });

  it('an answer for a reset run is dropped', async () => {
    const { store, epoch } = pausedRun(2);
    const d = deps(store, []);
    const late = autosaveRun({ ...d, snapshot: async () => (store.getState().clearRun(), d.snapshot()) }, epoch);
    await late;
    expect(await storage.list()).toEqual([]);
    expect(store.getState().autosave).toBeNull();
  });
});

describe('storage error messages and entry helpers', () => {
  it('names a full quota and keeps other messages', () => {
    expect(isQuotaError(quota())).toBe(true);
    expect(isQuotaError({ code: 22 })).toBe(true);
    expect(isQuotaError(new Error('x'))).toBe(false);
    expect(storageErrorMessage('Autosave', new Error('database blocked'))).toBe('Autosave failed: database blocked');
  });

  it('best validation loss ignores non-finite values', () => {
    expect(bestValLoss([])).toBeNull();
    expect(
      bestValLoss([
        { step: 1, valLoss: NaN },
        { step: 2, valLoss: 3 },
        { step: 3, valLoss: 2.5 },
      ]),
    ).toBe(2.5);
  });
});
