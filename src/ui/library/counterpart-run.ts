// One click from a library run to the run to compare it with: the same config with the other
// attention (dense ↔ NSA) starts as a new library entry, and both are picked for the comparison.
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
  if (busy()) {
    lib.setError('Pause or reset the current run first.');
    return;
  }
  const config = counterpartConfig(entry.config);
  const problems = startProblems(config, useStore.getState().upload);
  if (problems.length) {
    lib.setError(`Cannot start the counterpart of ${entry.name}: ${problems[0]}`);
    return;
  }
  if (useStore.getState().status !== 'idle') {
    await confirmReset();
    if (useStore.getState().status !== 'idle') return; // the reset was declined
  }
  useStore.getState().setConfig(config);
  const newId = newRunId();
  useLibrary.getState().setCompare([id, newId]);
  await run(newId);
}
