// Page state (zustand). Plain data and synchronous transitions only; ./controller.ts talks to the
// worker and calls these.
import { create } from 'zustand';
import type { AdapterSummary } from '../gpu/context';
import type { Heartbeat, StepMetrics } from '../train/types';
import type { TrainResult, TrainUpdate } from '../worker/protocol';

export type AdapterState =
  | { status: 'probing' }
  | { status: 'ready'; summary: AdapterSummary }
  | { status: 'unavailable'; message: string };

export type RunStatus = 'idle' | 'starting' | 'training' | 'pausing' | 'paused' | 'stopping' | 'done' | 'stopped' | 'error';

export const DEFAULT_STEPS = 30;
export const MAX_STEPS = 100_000;

/** The steps field's value as a step count, or null when it is not an integer in [1, MAX_STEPS]. */
export function parseSteps(text: string): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 && n <= MAX_STEPS ? n : null;
}

export interface PlaygroundState {
  adapter: AdapterState;
  stepsText: string;
  status: RunStatus;
  /** Steps the current run was asked for. */
  target: number;
  stepsDone: number;
  metrics: StepMetrics[];
  heartbeat: Heartbeat | null;
  error: string | null;

  setAdapter(a: AdapterState): void;
  setStepsText(text: string): void;
  runStarting(target: number): void;
  setStatus(status: RunStatus): void;
  applyUpdate(u: TrainUpdate): void;
  runEnded(r: TrainResult): void;
  runFailed(message: string): void;
}

export const useStore = create<PlaygroundState>()((set) => ({
  adapter: { status: 'probing' },
  stepsText: String(DEFAULT_STEPS),
  status: 'idle',
  target: 0,
  stepsDone: 0,
  metrics: [],
  heartbeat: null,
  error: null,

  setAdapter: (adapter) => set({ adapter }),
  setStepsText: (stepsText) => set({ stepsText }),
  runStarting: (target) => set({ status: 'starting', target, stepsDone: 0, metrics: [], heartbeat: null, error: null }),
  setStatus: (status) => set({ status }),
  applyUpdate: (u) =>
    set((s) => {
      const metrics = u.metrics.length ? [...s.metrics, ...u.metrics] : s.metrics;
      const last = metrics.at(-1);
      return { metrics, heartbeat: u.heartbeat ?? s.heartbeat, stepsDone: last ? last.step + 1 : s.stepsDone };
    }),
  runEnded: (r) => set({ status: r.end, stepsDone: r.stepsDone }),
  runFailed: (error) => set({ status: 'error', error }),
}));
