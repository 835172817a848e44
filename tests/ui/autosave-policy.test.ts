// When the page autosaves while training, and which steps a reload would lose.
import { describe, expect, it } from 'vitest';

import { preset } from '../../src/train/presets/presets';
import { AUTOSAVE_EVERY, autosaveChunk, configSummary, unsavedSteps } from '../../src/ui/autosave-policy';

describe('autosave policy', () => {
  it('train() chunks end at every multiple of K (50 by default), never past the steps asked', () => {
    expect(AUTOSAVE_EVERY).toBe(50);
    expect(autosaveChunk(0, 200)).toBe(50);
    expect(autosaveChunk(49, 200)).toBe(1);
    expect(autosaveChunk(50, 200)).toBe(50);
    expect(autosaveChunk(73, 200)).toBe(27);
    expect(autosaveChunk(73, 5)).toBe(5);
    expect(autosaveChunk(10, 1)).toBe(1); // Step
    expect(autosaveChunk(10, 0)).toBe(0);
    expect(autosaveChunk(7, 30, 0)).toBe(30); // disabled
    // A run of 120 steps from 0: chunks 50, 50, 20.
    const chunks: number[] = [];
    for (let done = 0, left = 120; left > 0;) {
      const c = autosaveChunk(done, left, 50);
      chunks.push(c);
      done += c;
      left -= c;
    }
    expect(chunks).toEqual([50, 50, 20]);
  });

  it('unsaved steps: trained steps past the last autosave, none without a live run', () => {
    expect(unsavedSteps({ status: 'idle', stepsDone: 0, autosavedStep: 0 })).toBe(0);
    expect(unsavedSteps({ status: 'starting', stepsDone: 0, autosavedStep: 0 })).toBe(0);
    expect(unsavedSteps({ status: 'paused', stepsDone: 0, autosavedStep: 0 })).toBe(0); // built, not trained
    expect(unsavedSteps({ status: 'running', stepsDone: 7, autosavedStep: 0 })).toBe(7);
    expect(unsavedSteps({ status: 'pausing', stepsDone: 7, autosavedStep: 5 })).toBe(2);
    expect(unsavedSteps({ status: 'paused', stepsDone: 7, autosavedStep: 7 })).toBe(0);
    expect(unsavedSteps({ status: 'done', stepsDone: 9, autosavedStep: 7 })).toBe(2);
    expect(unsavedSteps({ status: 'error', stepsDone: 9, autosavedStep: 0 })).toBe(0); // nothing can be saved
  });

  it('the config summary names the preset, shape, steps and data', () => {
    const c = preset('tiny');
    const s = configSummary(c, 'tiny');
    expect(s.startsWith('tiny · ')).toBe(true);
    expect(s).toContain(`${c.model.nLayers} layers`);
    expect(s).toContain(`${c.train.steps} steps`);
    expect(s).toContain(c.data.source);
  });
});
