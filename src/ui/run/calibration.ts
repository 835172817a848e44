// Time estimates calibrated by measurement: a run's first steps give this adapter's effective FLOP
// rate (6 FLOPs per parameter and token over the measured ms per step), kept per adapter in the
// browser. The time per step and whole-run time shown beside the config use it once a run has
// measured it; before that, the deliberately low assumed rate of the watchdog (which the first SwiftShader
// runs measured 3–6× slower than the old estimate, issue 24).
import { useEffect } from 'react';
import { create } from 'zustand';

import { describeAdapter } from '../../gpu/context';
import type { StepMetrics } from '../../train/types';
import { type AdapterState, useStore } from '../store';

/** One adapter's measured rate. */
export interface StepRate {
  /** Effective FLOP/s: 6 · parameters · tokens per step / seconds per step. */
  flopsPerSecond: number;
  /** Steps it was measured over. */
  steps: number;
}

/** Steps calibration reads: the first is skipped (it warms caches and may still compile), then up to this many. */
export const CALIBRATION_STEPS = 20;
const STORAGE_KEY = 'nsa-playground:step-rates';

/** Median ms per step of steps 2 … CALIBRATION_STEPS + 1 (at least one), or null with fewer than 2 steps. */
export function calibrationStepMs(metrics: readonly StepMetrics[]): number | null {
  const ms = metrics
    .slice(1, CALIBRATION_STEPS + 1)
    .map((m) => m.stepMs)
    .filter((x) => Number.isFinite(x) && x > 0)
    .sort((a, b) => a - b);
  if (ms.length === 0) return null;
  const mid = ms.length >> 1;
  return ms.length % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
}

/** The rate the first steps of a run measured, or null before two steps. */
export function measuredRate(metrics: readonly StepMetrics[], params: number, tokensPerStep: number): StepRate | null {
  const ms = calibrationStepMs(metrics);
  if (ms === null || !(params > 0 && tokensPerStep > 0)) return null;
  return { flopsPerSecond: (6 * params * tokensPerStep) / (ms / 1000), steps: Math.min(metrics.length - 1, CALIBRATION_STEPS) };
}

function load(): Record<string, StepRate> {
  try {
    const raw = typeof localStorage === 'undefined' ? null : localStorage.getItem(STORAGE_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, StepRate>) : {};
  } catch {
    return {}; // storage blocked or a damaged entry: no calibration, the rough estimate
  }
}

interface RatesState {
  /** By adapter (its description line). */
  rates: Record<string, StepRate>;
  record(adapter: string, rate: StepRate): void;
}

export const useStepRates = create<RatesState>()((set, get) => ({
  rates: load(),
  record(adapter, rate) {
    const rates = { ...get().rates, [adapter]: rate };
    set({ rates });
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(rates));
    } catch {
      // storage full or blocked: the rate still applies for this page
    }
  },
}));

/** The adapter's key in the rates (its description line), or null before one is named. */
export function adapterKey(a: AdapterState): string | null {
  return a.status === 'ready' ? describeAdapter(a.summary) : null;
}

/** This adapter's measured FLOP rate, or null when no run has measured it yet. */
export function useAdapterRate(): StepRate | null {
  const key = useStore((s) => adapterKey(s.adapter));
  return useStepRates((r) => (key === null ? null : (r.rates[key] ?? null)));
}

/** The measured rate for the adapter of `a`, outside React (the slow-run question). */
export function rateFor(a: AdapterState): number | null {
  const key = adapterKey(a);
  return key === null ? null : (useStepRates.getState().rates[key]?.flopsPerSecond ?? null);
}

/** Records the rate of the held run's first steps for this adapter, refined at each of them. */
export function useCalibration(): void {
  const metrics = useStore((s) => s.metrics);
  const info = useStore((s) => s.runInfo);
  const key = useStore((s) => adapterKey(s.adapter));
  const n = metrics.length;
  useEffect(() => {
    if (!info || key === null || n < 2 || n > CALIBRATION_STEPS + 1) return;
    const rate = measuredRate(useStore.getState().metrics, info.paramCount, info.tokensPerStep);
    if (rate) useStepRates.getState().record(key, rate);
  }, [n, info, key]);
}
