// A config as the flat list of its settings ('model.nsa.d' → 4), and the difference of two configs
// as the settings that changed. A known field is one setting even when its value is an object
// (the gate ablation), so a diff never mixes the keys of two union members.
import type { RunConfig } from '../../train/config';
import { fieldSpec } from './fields';
import { deletePath, isRecord, jsonEqual, setPath } from './paths';

/** Setting path → value; `null` in a diff means "absent in the edited config". */
export type ConfigDiff = Record<string, unknown>;

export function flattenConfig(c: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (v: unknown, path: string) => {
    if (path && (fieldSpec(path) || !isRecord(v))) {
      out.set(path, v);
      return;
    }
    if (!isRecord(v)) return;
    for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(c, prefix);
  return out;
}

/**
 * The settings of `edited` that differ from `base`, in `edited`'s order; a subtree of `base`
 * missing from `edited` (model.nsa of a dense config) appears once as its path → null.
 */
export function diffConfig(base: RunConfig, edited: RunConfig): ConfigDiff {
  const a = flattenConfig(base);
  const b = flattenConfig(edited);
  const diff: ConfigDiff = {};
  for (const [path, v] of b) if (!a.has(path) || !jsonEqual(a.get(path), v)) diff[path] = v;
  const removed = new Set<string>();
  for (const path of a.keys()) {
    if (b.has(path)) continue;
    // Report the highest missing ancestor: model.nsa rather than each of its fields.
    const keys = path.split('.');
    let top = path;
    for (let i = 1; i <= keys.length; i++) {
      const p = keys.slice(0, i).join('.');
      if (![...b.keys()].some((q) => q === p || q.startsWith(`${p}.`))) {
        top = p;
        break;
      }
    }
    removed.add(top);
  }
  for (const p of removed) diff[p] = null;
  return diff;
}

/** `base` with the diff applied (a copy). */
export function applyDiff(base: RunConfig, diff: ConfigDiff): RunConfig {
  let out = structuredClone(base);
  for (const [path, v] of Object.entries(diff)) out = v === null ? deletePath(out, path) : setPath(out, path, structuredClone(v));
  return out;
}

export function diffSize(base: RunConfig, edited: RunConfig): number {
  return Object.keys(diffConfig(base, edited)).length;
}
