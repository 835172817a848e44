// "Same config, dense attention" (or NSA): the config of the run to compare a run with, equal in
// everything but the attention. A dense config without NSA settings takes its closest preset's.
import type { RunConfig } from '../../train/config';
import { closestPreset, uiPreset } from '../config/presets';

export function counterpartAttention(c: RunConfig): 'dense' | 'nsa' {
  return c.model.attention === 'nsa' ? 'dense' : 'nsa';
}

/** The button's label for a run of this config. */
export function counterpartLabel(c: RunConfig): string {
  return counterpartAttention(c) === 'nsa' ? 'Same config, NSA' : 'Same config, dense attention';
}

/**
 * "Same config, window only": NSA with every gate but the sliding window's forced to 0 — the
 * mechanism that cannot reach past w, the baseline a recall comparison needs beside NSA and dense.
 * Null for a dense run and for a run that is already window-only.
 */
export function windowOnlyConfig(c: RunConfig): RunConfig | null {
  const g = c.model.nsa?.gates;
  if (c.model.attention !== 'nsa' || !c.model.nsa || (g?.kind === 'force' && g.branch === 'win')) return null;
  const out = structuredClone(c);
  out.model.nsa!.gates = { kind: 'force', branch: 'win' };
  return out;
}

/** `c` with the other attention (a copy). */
export function counterpartConfig(c: RunConfig): RunConfig {
  const out = structuredClone(c);
  out.model.attention = counterpartAttention(c);
  if (out.model.attention === 'nsa' && !out.model.nsa) out.model.nsa = uiPreset(closestPreset(c)).model.nsa;
  return out;
}
