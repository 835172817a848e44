// The presets the page offers: the engine's named presets plus the task ones (recall, long, passkey).
import type { RunConfig } from '../../train/config';
import { longPreset } from '../../train/presets/long-preset';
import { mqarPresetConfig } from '../../train/presets/mqar-preset';
import { passkeyLongPreset } from '../../train/presets/passkey-long-preset';
import { passkeyPreset } from '../../train/presets/passkey-preset';
import { preset, type PresetName } from '../../train/presets/presets';
import { recallPreset } from '../../train/presets/recall-preset';
import { diffSize } from './diff';

export const UI_PRESET_NAMES = [
  'tiny',
  'small',
  'm7c-125m',
  'recall',
  'mqar-tiny',
  'mqar',
  'mqar-long',
  'long',
  'passkey',
  'passkey-long',
] as const;
export type UiPresetName = (typeof UI_PRESET_NAMES)[number];
export const DEFAULT_PRESET: UiPresetName = 'tiny';

export const PRESET_LABELS: Record<UiPresetName, string> = {
  tiny: 'tiny — 2 layers, dim 64, T 64 (seconds on any GPU)',
  small: 'small — 4 layers, dim 256, T 256',
  'm7c-125m': 'm7c-125m — 12 layers, dim 768, T 1024, GPT-2 tokens',
  recall: 'recall task — tiny NSA model, answers beyond the window',
  'mqar-tiny': 'MQAR tiny — multi-query recall, T 64, attention-only with a key convolution',
  mqar: 'MQAR — 16 pairs at T 256 (a GPU preset)',
  'mqar-long': 'MQAR long — 64 pairs at T 1024, NSA reading about a fifth of the keys (a GPU preset)',
  long: 'long — recall at T 4096, paper NSA blocks (a GPU preset)',
  passkey: 'passkey task — tiny NSA model, the needle beyond the window',
  'passkey-long': 'passkey long — a 4-digit key at T 1024, MQAR long’s model (a GPU preset)',
};

export function isUiPresetName(s: string): s is UiPresetName {
  return (UI_PRESET_NAMES as readonly string[]).includes(s);
}

/** A fresh copy of the preset, safe to edit. */
export function uiPreset(name: UiPresetName): RunConfig {
  if (name === 'recall') return recallPreset();
  if (name === 'long') return longPreset();
  if (name === 'passkey') return passkeyPreset();
  if (name === 'passkey-long') return passkeyLongPreset();
  if (name === 'mqar-tiny' || name === 'mqar' || name === 'mqar-long') return mqarPresetConfig(name);
  return preset(name satisfies PresetName);
}

/** The preset `c` equals, if any. */
export function matchingPreset(c: RunConfig): UiPresetName | null {
  return UI_PRESET_NAMES.find((n) => diffSize(uiPreset(n), c) === 0) ?? null;
}

/** The preset `c` differs least from (ties to the earlier name). */
export function closestPreset(c: RunConfig): UiPresetName {
  let best: UiPresetName = DEFAULT_PRESET;
  let bestSize = Infinity;
  for (const n of UI_PRESET_NAMES) {
    const s = diffSize(uiPreset(n), c);
    if (s < bestSize) [best, bestSize] = [n, s];
  }
  return best;
}
