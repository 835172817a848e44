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

/** `c` with the other attention (a copy). */
export function counterpartConfig(c: RunConfig): RunConfig {
  const out = structuredClone(c);
  out.model.attention = counterpartAttention(c);
  if (out.model.attention === 'nsa' && !out.model.nsa) out.model.nsa = uiPreset(closestPreset(c)).model.nsa;
  return out;
}
