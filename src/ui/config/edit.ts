// One edit of the config from the panel.
import type { ModelConfig } from '../../definitions/model-config';
import type { NsaConfig } from '../../definitions/nsa-config';
import type { DataSource, RunConfig } from '../../train/config';
import { withDataSource } from '../../train/presets/recall-preset';
import { setPath } from './paths';
import { closestPreset, uiPreset } from './presets';

/**
 * `c` with `path` set to `v`; switching a config without the options of the attention picked fills
 * them in (NSA: its preset's; the window, MoBA and DSA: sized from the NSA settings at hand as
 * `npm run learn` sizes them, see mechanismDefaults), switching the data source adds or drops the
 * recall task (withDataSource).
 */
export function editConfig(c: RunConfig, path: string, v: unknown): RunConfig {
  if (path === 'data.source') return { ...c, data: withDataSource(c.data, v as DataSource) };
  const next = setPath(c, path, v);
  if (path !== 'model.attention') return next;
  const preset = () => uiPreset(closestPreset(c));
  if (v === 'nsa' && !next.model.nsa) next.model.nsa = preset().model.nsa;
  if ((v === 'window' && !next.model.window) || (v === 'moba' && !next.model.moba) || (v === 'dsa' && !next.model.dsa)) {
    const nsa = next.model.nsa ?? preset().model.nsa;
    if (nsa) Object.assign(next.model, mechanismDefaults(v, nsa, next));
  }
  return next;
}

/**
 * A mechanism's options sized from NSA settings, as src/train/learn/grid.ts sizes its grid: the
 * window w = nsa.w; MoBA blocks of l′ with k = n (at most the blocks of T); DSA k = n·l′ + w (at most
 * T) with a 2-head indexer of width dk/2 (even, ≥ 2) and a dense warm-up of 5 % of the steps.
 * Values a bad field makes meaningless (T, dk, steps not yet numbers) are left for validation to name.
 */
export function mechanismDefaults(kind: 'window' | 'moba' | 'dsa', nsa: NsaConfig, c: RunConfig): Partial<ModelConfig> {
  const T = c.model.seqLen;
  const okT = Number.isInteger(T) && T >= 1;
  if (kind === 'window') return { window: { w: okT ? Math.min(nsa.w, T) : nsa.w } };
  if (kind === 'moba')
    return { moba: { blockSize: nsa.lSel, topK: okT ? Math.max(1, Math.min(nsa.nSel, Math.ceil(T / nsa.lSel))) : nsa.nSel } };
  const budget = nsa.nSel * nsa.lSel + nsa.w;
  const dk = c.model.dk;
  const steps = c.train.steps;
  return {
    dsa: {
      indexHeads: 2,
      indexDim: Number.isInteger(dk) && dk >= 2 ? Math.max(2, 2 * Math.floor(dk / 4)) : 2,
      topK: okT ? Math.min(budget, T) : budget,
      warmupSteps: Number.isInteger(steps) && steps >= 0 ? Math.round(steps / 20) : 0,
      lossWeight: 1,
    },
  };
}
