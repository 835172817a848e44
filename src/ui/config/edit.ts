// One edit of the config from the panel.
import type { RunConfig } from '../../train/config';
import { setPath } from './paths';
import { closestPreset, uiPreset } from './presets';

/** `c` with `path` set to `v`; switching a config without an nsa block to NSA fills in its preset's. */
export function editConfig(c: RunConfig, path: string, v: unknown): RunConfig {
  const next = setPath(c, path, v);
  if (path === 'model.attention' && v === 'nsa' && !next.model.nsa) next.model.nsa = uiPreset(closestPreset(c)).model.nsa;
  return next;
}
