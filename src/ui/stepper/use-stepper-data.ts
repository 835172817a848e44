// Where the stepper's snapshots come from: an eager list (decode snapshots, tests) and/or lazily
// loaded training snapshots (the worker keeps them; the page fetches the one in view). Loaded
// snapshots are cached (a few, least recently used first out) so stepping back and forth is instant.
import { useEffect, useMemo, useRef, useState } from 'react';

import type { SelectionSnapshot } from '../../definitions/selection-snapshot';
import { type Frame, frameKey, listFrames, pick } from './frames';

export type SnapshotLoader = (step: number, layer: number, group: number) => Promise<SelectionSnapshot | null>;

export interface StepperSources {
  snapshots?: readonly SelectionSnapshot[];
  /** Training steps with a snapshot in the worker (ascending). */
  steps?: readonly number[];
  /** Layers and groups every lazily loaded step has. */
  layers?: number;
  groups?: number;
  load?: SnapshotLoader;
}

export interface StepperData {
  frames: Frame[];
  snapshot: SelectionSnapshot | null;
  layers: number[];
  groups: number[];
  /** A lazy snapshot is on its way (the previous one stays in view meanwhile). */
  loading: boolean;
  error: string | null;
}

const CACHE_SIZE = 12;
const range = (n: number) => Array.from({ length: Math.max(0, n) }, (_, i) => i);

export function mergeFrames(snapshots: readonly SelectionSnapshot[], steps: readonly number[]): Frame[] {
  const eager = listFrames(snapshots);
  const have = new Set(eager.map((f) => f.key));
  const lazy: Frame[] = steps
    .filter((s) => !have.has(frameKey('train', s)))
    .map((step) => ({ key: frameKey('train', step), source: 'train', step, label: `step ${step}` }));
  const rank = (f: Frame) => (f.source === 'train' ? 0 : 1);
  return [...eager, ...lazy].sort((a, b) => rank(a) - rank(b) || a.step - b.step);
}

export function useStepperData(src: StepperSources, key: string | null, layer: number, group: number): StepperData {
  const snapshots = src.snapshots ?? EMPTY;
  const steps = src.steps ?? EMPTY_STEPS;
  const frames = useMemo(() => mergeFrames(snapshots, steps), [snapshots, steps]);
  const eager = pick(snapshots, key, layer, group);
  const frame = frames.find((f) => f.key === key);
  const lazyFrame = !eager.snapshot && frame?.source === 'train' && steps.includes(frame.step) && src.load ? frame : null;
  const layers = lazyFrame ? range(src.layers ?? 0) : eager.layers;
  const groups = lazyFrame ? range(src.groups ?? 0) : eager.groups;
  const L = layers.includes(layer) ? layer : (layers[0] ?? 0);
  const g = groups.includes(group) ? group : (groups[0] ?? 0);
  const lazyKey = lazyFrame ? `${lazyFrame.step}/${L}/${g}` : null;

  const lazyStep = lazyFrame ? lazyFrame.step : null;
  const load = src.load;

  const cache = useRef(new Map<string, SelectionSnapshot | null>());
  const [loaded, setLoaded] = useState<{ key: string; snap: SelectionSnapshot | null; error: string | null } | null>(null);
  // A new loader is a new run: nothing cached belongs to it.
  useEffect(() => cache.current.clear(), [load]);
  useEffect(() => {
    const keep = new Set(steps);
    for (const k of [...cache.current.keys()]) if (!keep.has(Number(k.split('/')[0]))) cache.current.delete(k);
  }, [steps]);
  // lazyKey is `${lazyStep}/${L}/${g}`: the step, layer and group change only with it.
  useEffect(() => {
    if (!lazyKey || lazyStep === null || !load) return;
    const hit = cache.current.get(lazyKey);
    if (hit !== undefined) {
      cache.current.delete(lazyKey);
      cache.current.set(lazyKey, hit);
      setLoaded({ key: lazyKey, snap: hit, error: null });
      return;
    }
    let live = true;
    load(lazyStep, L, g).then(
      (snap) => {
        cache.current.set(lazyKey, snap);
        while (cache.current.size > CACHE_SIZE) cache.current.delete(cache.current.keys().next().value as string);
        if (live) setLoaded({ key: lazyKey, snap, error: null });
      },
      (e: unknown) => {
        if (live) setLoaded({ key: lazyKey, snap: null, error: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      live = false;
    };
  }, [lazyKey, lazyStep, L, g, load]);

  if (!lazyKey) return { frames, snapshot: eager.snapshot, layers, groups, loading: false, error: null };
  const ready = loaded?.key === lazyKey;
  return {
    frames,
    snapshot: loaded?.snap ?? null,
    layers,
    groups,
    loading: !ready,
    error: ready ? (loaded.error ?? (loaded.snap ? null : `The worker no longer keeps the snapshot of step ${lazyFrame!.step}.`)) : null,
  };
}

const EMPTY: readonly SelectionSnapshot[] = [];
const EMPTY_STEPS: readonly number[] = [];
