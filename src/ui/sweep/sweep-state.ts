// The sweep's page state (zustand): the planned sweep (persisted on every change, ./sweep-storage),
// whether it is training now, and the last failure. Plain transitions; ./sweep-runner.ts drives it.
import { create } from 'zustand';

import type { Sweep } from './sweep-plan';
import { type KeyValue, loadSweep, saveSweep } from './sweep-storage';

export interface SweepState {
  sweep: Sweep | null;
  /** A setting is being trained by the sweep now (never true after a reload: Resume starts it again). */
  running: boolean;
  /** Stop was pressed: the setting in training pauses and the sweep ends after it. */
  stopping: boolean;
  error: string | null;
  /** Replaces the sweep and stores it (a storage failure is shown, the sweep still runs). */
  setSweep(s: Sweep | null): void;
  setRunning(running: boolean): void;
  setStopping(stopping: boolean): void;
  setError(message: string | null): void;
}

export function createSweepStore(storage?: KeyValue | null) {
  let initial: Sweep | null = null;
  let error: string | null = null;
  try {
    initial = loadSweep(storage);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  return create<SweepState>()((set) => ({
    sweep: initial,
    running: false,
    stopping: false,
    error,
    setSweep: (sweep) => {
      let saveError: string | null = null;
      try {
        saveSweep(sweep, storage);
      } catch (e) {
        saveError = `Storing the sweep failed (a reload would lose its progress): ${e instanceof Error ? e.message : String(e)}`;
      }
      set(saveError ? { sweep, error: saveError } : { sweep });
    },
    setRunning: (running) => set({ running }),
    setStopping: (stopping) => set({ stopping }),
    setError: (error) => set({ error }),
  }));
}

export type SweepStore = ReturnType<typeof createSweepStore>;

export const useSweep: SweepStore = createSweepStore();
