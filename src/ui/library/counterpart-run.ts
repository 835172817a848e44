// One click from a library run to the run to compare it with: the same config with the other
// attention (dense ↔ NSA) starts as a new library entry, and both are picked for the comparison.
import type { RunConfig } from '../../train/config';
import { busy, confirmReset, run, startProblems } from '../controller';
import { useStore } from '../store';
import { counterpartConfig } from './counterpart';
import { newRunId } from './entry';
import { useLibrary } from './library-state';

export async function startCounterpart(id: string): Promise<void> {
  const lib = useLibrary.getState();
  lib.setError(null);
  const entry = lib.entries.find((e) => e.id === id);
  if (!entry) return;
  const problem = await startCounterpartOf(entry.config, id, entry.name);
  if (problem) lib.setError(problem);
}

/**
 * Starts the counterpart of `config` (the run `id`, named `name`) as a new run, picked for the
 * comparison beside `id`. Returns why it could not start, or null.
 */
export async function startCounterpartOf(config: RunConfig, id: string, name: string): Promise<string | null> {
  if (busy()) return 'Pause or reset the current run first.';
  const next = counterpartConfig(config);
  const problems = startProblems(next, useStore.getState().upload);
  if (problems.length) return `Cannot start the counterpart of ${name}: ${problems[0]}`;
  if (useStore.getState().status !== 'idle') {
    await confirmReset();
    if (useStore.getState().status !== 'idle') return null; // the reset was declined
  }
  useStore.getState().setConfig(next);
  const newId = newRunId();
  useLibrary.getState().setCompare([id, newId]);
  await run(newId);
  return null;
}
