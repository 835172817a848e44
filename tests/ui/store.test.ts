// Page state transitions and the controller's pure choices (data source, snapshot rate, start).
import { describe, expect, it } from 'vitest';

import { passkeyPreset } from '../../src/train/presets/passkey-preset';
import { preset } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';
import { dataSpecFor, snapshotEvery, startProblems } from '../../src/ui/controller';
import { createPlaygroundStore, elapsedMs } from '../../src/ui/store';
import type { InitInfo } from '../../src/worker/protocol';

const info = {
  adapter: {},
  dataset: {},
  paramCount: 1,
  gpuBytes: 1,
  tokensPerStep: 1,
  heartbeat: null,
  snapshotCapacity: 0,
} as unknown as InitInfo;
const metric = (step: number) => ({ step, loss: 5, lr: 1, gradNorm: 1, tokensPerSecond: 1, stepMs: 1, elapsedMs: 1 });

describe('playground store', () => {
  it('a run: starting → paused (ready) → running → updates → paused or done at config.train.steps', () => {
    const c = preset('tiny');
    c.train.steps = 3;
    const store = createPlaygroundStore({ config: c, preset: 'tiny' });
    const s = () => store.getState();
    const e1 = s().runStarting(c, 'run-a');
    expect(s()).toMatchObject({ status: 'starting', libraryId: 'run-a' });
    s().runReady(info);
    expect(s().status).toBe('paused');
    s().trainingStarted();
    expect(s().status).toBe('running');
    s().applyUpdate({ metrics: [metric(0), metric(1)], evals: [{ step: 2, valLoss: 4 }], heartbeat: null, snapshotSteps: [0, 1] });
    expect(s().stepsDone).toBe(2);
    expect(s().snapshotSteps).toEqual([0, 1]);
    // One Step call that ends 'done' (its own target) leaves the run paused before config.train.steps.
    s().trainingEnded({ end: 'done', stepsDone: 2, last: null, heartbeat: null });
    expect(s().status).toBe('paused');
    s().trainingStarted();
    s().trainingEnded({ end: 'done', stepsDone: 3, last: null, heartbeat: null });
    expect(s().status).toBe('done');
    expect(s().runningSince).toBeNull();
    expect(elapsedMs(s())).toBeGreaterThanOrEqual(0);
    // Reset: back to no run, a new epoch, the config kept.
    const e2 = s().clearRun();
    expect(e2).toBeGreaterThan(e1);
    expect(s()).toMatchObject({ status: 'idle', stepsDone: 0, metrics: [], evals: [], snapshotSteps: [], runInfo: null, libraryId: null });
    expect(s().config.train.steps).toBe(3);
  });

  it("a run continued from a checkpoint: its config replaces the page's, its metrics fill the charts, paused (or done) at its step", () => {
    const page = preset('small');
    const store = createPlaygroundStore({ config: page, preset: 'small', error: 'bad link' });
    const s = () => store.getState();
    s().runStarting(page, 'run-b');
    const c = preset('tiny');
    c.train.steps = 4;
    const evals = [{ step: 2, valLoss: 4 }];
    s().runResumed({ ...info, config: c, stepsDone: 2, metrics: [metric(0), metric(1)], evals });
    expect(s()).toMatchObject({ status: 'paused', stepsDone: 2, config: c, runConfig: c, evals, configNotice: null });
    expect(s().metrics.map((m) => m.step)).toEqual([0, 1]);
    s().applyUpdate({ metrics: [metric(2)], evals: [], heartbeat: null, snapshotSteps: null });
    expect(s().stepsDone).toBe(3);
    s().runResumed({ ...info, config: c, stepsDone: 4, metrics: [0, 1, 2, 3].map(metric), evals });
    expect(s().status).toBe('done');
  });

  it('a URL config with an error keeps the notice until the next edit', () => {
    const store = createPlaygroundStore({ config: preset('tiny'), preset: 'tiny', error: 'bad link' });
    expect(store.getState().configNotice).toBe('bad link');
    store.getState().setConfig(preset('small'));
    expect(store.getState().configNotice).toBeNull();
  });
});

describe('controller choices', () => {
  it('data: brown, copy, random, upload (only with a file), recall (the task travels in the config)', () => {
    const c = preset('tiny');
    expect(dataSpecFor(c, null)).toEqual({ kind: 'brown' });
    c.data.source = 'upload';
    expect(dataSpecFor(c, null)).toBeNull();
    expect(dataSpecFor(c, { name: 'a.txt', text: 'hi', bytes: 2 })).toEqual({ kind: 'upload', name: 'a.txt', text: 'hi' });
    expect(startProblems(c, null)).toEqual(['Choose a .txt file to train on.']);
    c.data.source = 'random';
    expect(dataSpecFor(c, null)).toEqual({ kind: 'random' });
    expect(dataSpecFor(recallPreset(), null)).toEqual({ kind: 'recall' });
    // No guessing from the preset: the recall preset's model on random tokens trains random tokens.
    const r = recallPreset();
    r.data.source = 'random';
    delete r.data.recall;
    expect(dataSpecFor(r, null)).toEqual({ kind: 'random' });
    expect(dataSpecFor(passkeyPreset(), null)).toEqual({ kind: 'passkey' });
  });

  it('snapshots about 64 times per NSA run, never for dense', () => {
    const c = preset('tiny');
    c.model.attention = 'dense';
    expect(snapshotEvery(c)).toBe(0);
    c.model.attention = 'nsa';
    expect(snapshotEvery(c)).toBe(5); // 300 steps
    c.train.steps = 10;
    expect(snapshotEvery(c)).toBe(1);
    c.train.steps = 10_000;
    expect(snapshotEvery(c)).toBe(156);
  });

  it('an invalid field blocks the start with its name', () => {
    const c = preset('tiny');
    c.model.dk = 15;
    expect(startProblems(c, null).join()).toMatch(/model\.dk/);
  });
});
