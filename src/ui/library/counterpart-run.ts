// One click from a library run to the run to compare it with: the same config with the other
// attention (dense ↔ NSA) starts as a new library entry, and both are picked for the comparison.
import type { RunConfig } from '../../train/config';
import { busy, confirmReset, run, startProblems } from '../controller';
import { useStore } from '../store';
import { counterpartConfig, windowOnlyConfig } from './counterpart';
import { newRunId } from './entry';
import { useLibrary } from './library-state';

/** kind 'attention': the other attention (dense ↔ NSA); 'window': NSA forced to its window. */
export async function startCounterpart(id: string, kind: 'attention' | 'window' = 'attention'): Promise<void> {
  const lib = useLibrary.getState();
  lib.setError(null);
  const entry = lib.entries.find((e) => e.id === id);
  if (!entry) return;
  const next = kind === 'window' ? windowOnlyConfig(entry.config) : counterpartConfig(entry.config);
  if (!next) return;
  const problem = await startCounterpartOf(entry.config, id, entry.name, next);
  if (problem) lib.setError(problem);
}

/**
 * Starts the counterpart of `config` (the run `id`, named `name`) as a new run, picked for the
 * comparison beside `id`. Returns why it could not start, or null.
 */
export async function startCounterpartOf(
  config: RunConfig,
  id: string,
  name: string,
  next: RunConfig = counterpartConfig(config),
): Promise<string | null> {
  if (busy()) return 'Pause or reset the current run first.';
  const problems = startProblems(next, useStore.getState().upload);
  if (problems.length) return `Cannot start the counterpart of ${name}: ${problems[0]}`;
  if (useStore.getState().status !== 'idle') {
    await confirmReset();
    if (useStore.getState().status !== 'idle') return null; // the reset was declined
  }
  useStore.getState().setConfig(next);
  const newId = newRunId();
  // Beside the runs already compared with this one (NSA, then dense, then window only: three curves).
  const picked = useLibrary.getState().compare;
  useLibrary.getState().setCompare([...(picked.includes(id) ? picked : [id]), newId]);
  await run(newId);
  return null;
}
