// One edit of the config from the panel.
import type { DataSource, RunConfig } from '../../train/config';
import { withDataSource } from '../../train/presets/recall-preset';
import { setPath } from './paths';
import { closestPreset, uiPreset } from './presets';

/**
 * `c` with `path` set to `v`; switching a config without an nsa block to NSA fills in its preset's,
 * switching the data source adds or drops the recall task (withDataSource).
 */
export function editConfig(c: RunConfig, path: string, v: unknown): RunConfig {
  if (path === 'data.source') return { ...c, data: withDataSource(c.data, v as DataSource) };
  const next = setPath(c, path, v);
  if (path === 'model.attention' && v === 'nsa' && !next.model.nsa) next.model.nsa = uiPreset(closestPreset(c)).model.nsa;
  return next;
}
