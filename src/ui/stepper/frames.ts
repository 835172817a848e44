// Navigation over a flat list of snapshots: frames are the distinct (source, step) pairs (training
// snapshots by step, then decode snapshots), and within a frame the available layers and groups.
import type { SelectionSnapshot } from '../../definitions/selection-snapshot';

export type SnapshotSource = 'train' | 'decode';

export interface Frame {
  key: string;
  source: SnapshotSource;
  step: number;
  label: string;
}

export const sourceOf = (s: SelectionSnapshot): SnapshotSource => s.source ?? 'train';
export const frameKey = (source: SnapshotSource, step: number): string => `${source}:${step}`;

export function listFrames(snapshots: readonly SelectionSnapshot[]): Frame[] {
  const seen = new Map<string, Frame>();
  for (const s of snapshots) {
    const source = sourceOf(s);
    const key = frameKey(source, s.step);
    if (!seen.has(key))
      seen.set(key, { key, source, step: s.step, label: source === 'train' ? `step ${s.step}` : `generation (weights of step ${s.step})` });
  }
  const rank = (f: Frame) => (f.source === 'train' ? 0 : 1);
  return [...seen.values()].sort((a, b) => rank(a) - rank(b) || a.step - b.step);
}

export interface Selection {
  snapshot: SelectionSnapshot | null;
  layers: number[];
  groups: number[];
}

/**
 * The snapshot of (frame, layer, group); when that layer or group is not in the frame, the
 * frame's first layer / the layer's first group stands in.
 */
export function pick(snapshots: readonly SelectionSnapshot[], key: string | null, layer: number, group: number): Selection {
  const inFrame = snapshots.filter((s) => frameKey(sourceOf(s), s.step) === key);
  const layers = [...new Set(inFrame.map((s) => s.layer))].sort((a, b) => a - b);
  if (!layers.length) return { snapshot: null, layers, groups: [] };
  const L = layers.includes(layer) ? layer : layers[0];
  const inLayer = inFrame.filter((s) => s.layer === L);
  const groups = [...new Set(inLayer.map((s) => s.group))].sort((a, b) => a - b);
  const g = groups.includes(group) ? group : groups[0];
  return { snapshot: inLayer.find((s) => s.group === g) ?? null, layers, groups };
}
