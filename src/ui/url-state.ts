// The run config in the URL hash, so a link reproduces a run:
//   #v=1&preset=tiny&model.attention=nsa&train.steps=500&model.nsa.gates={"kind":"force","branch":"sel"}
// i.e. the format version, the preset, and each setting that differs from it (its dotted path =
// its value: numbers and booleans as JSON, enum words bare, objects as JSON; null = absent, for
// model.nsa, model.window, model.moba, model.dsa, data.recall and data.passkey).
// Parameters that are not config settings are left alone, for other page state.
import type { RunConfig } from '../train/config';
import { applyDiff, type ConfigDiff, diffConfig } from './config/diff';
import { ALL_FIELDS, OPTIONAL_OBJECTS } from './config/fields';
import { parseRunConfig } from './config/parse';
import { closestPreset, DEFAULT_PRESET, isUiPresetName, UI_PRESET_NAMES, uiPreset, type UiPresetName } from './config/presets';

export const HASH_VERSION = 1;

export interface HashConfig {
  config: RunConfig;
  /** The preset the hash is based on (the fallback's preset when the hash was unusable). */
  preset: UiPresetName;
  /** Why the hash could not be used; the config is then the preset's. */
  error?: string;
}

const SETTING_PREFIXES = ['model.', 'train.', 'data.'];
/** Paths a hash may set: every field, plus model.nsa, model.window, model.moba, model.dsa, data.recall and data.passkey (only to null: the config has none). */
const SETTABLE = new Set(ALL_FIELDS.map((f) => f.path));
const NON_FINITE: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

const isSetting = (key: string): boolean => SETTING_PREFIXES.some((p) => key.startsWith(p));

function parsesAsJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** Keeps JSON punctuation readable; escapes everything that would break the `k=v&…` syntax. */
function encodePart(s: string): string {
  return encodeURIComponent(s).replace(/%(7B|7D|5B|5D|3A|2C)/g, (m) => decodeURIComponent(m));
}

export function encodeValue(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (typeof v === 'string') return parsesAsJson(v) || v in NON_FINITE || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

export function decodeValue(s: string): unknown {
  if (s in NON_FINITE) return NON_FINITE[s];
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** The hash body (no '#') for `config` as a diff against `preset` (default: the closest one). */
export function encodeConfigHash(
  config: RunConfig,
  preset: UiPresetName = closestPreset(config),
  keep: ReadonlyArray<[string, string]> = [],
): string {
  const parts = [`v=${HASH_VERSION}`, `preset=${encodePart(preset)}`];
  for (const [path, v] of Object.entries(diffConfig(uiPreset(preset), config)))
    parts.push(`${encodePart(path)}=${encodePart(encodeValue(v))}`);
  for (const [k, v] of keep) parts.push(`${encodePart(k)}=${encodePart(v)}`);
  return parts.join('&');
}

type Params = Array<[string, string]>;

function splitParams(body: string): Params {
  if (!body) return [];
  return body
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const i = p.indexOf('=');
      const k = i < 0 ? p : p.slice(0, i);
      const v = i < 0 ? '' : p.slice(i + 1);
      return [decodeURIComponent(k), decodeURIComponent(v)];
    });
}

/** Parameters of the hash that are not config (other page state), to keep when rewriting it. */
export function foreignParams(hash: string): Params {
  try {
    return splitParams(hash.replace(/^#/, '')).filter(([k]) => k !== 'v' && k !== 'preset' && !isSetting(k));
  } catch {
    return [];
  }
}

function fallback(preset: UiPresetName, why: string): HashConfig {
  return { config: uiPreset(preset), preset, error: `The link's config could not be used: ${why}. Showing the ${preset} preset instead.` };
}

/** Whether a diff path is the setting a validation issue names (or lies under it, or holds it). */
function concerns(path: string, field: string): boolean {
  return path === field || field.startsWith(`${path}.`) || path.startsWith(`${field}.`);
}

function keptNotice(problems: readonly string[], kept: number): string {
  const which = problems.length === 1 ? 'One setting' : `${problems.length} settings`;
  const rest = kept
    ? `The link's other ${kept === 1 ? 'setting was' : `${kept} settings were`} applied.`
    : 'The preset is shown without changes.';
  return `${which} of the link could not be used and ${problems.length === 1 ? 'was' : 'were'} left out: ${problems.join('; ')}. ${rest}`;
}

/** Reads a hash ('#v=1&…' or the body alone). An empty or foreign hash gives the default preset. */
export function decodeConfigHash(hash: string): HashConfig {
  let params: Params;
  try {
    params = splitParams(hash.replace(/^#/, ''));
  } catch {
    return fallback(DEFAULT_PRESET, 'it is not valid URL encoding (a stray %?)');
  }
  const get = (k: string) => params.find(([key]) => key === k)?.[1];
  const settings = params.filter(([k]) => isSetting(k));
  const version = get('v');
  const presetText = get('preset');
  if (version === undefined && presetText === undefined && settings.length === 0)
    return { config: uiPreset(DEFAULT_PRESET), preset: DEFAULT_PRESET };
  if (version !== String(HASH_VERSION))
    return fallback(
      DEFAULT_PRESET,
      version === undefined
        ? `it has no format version (v=${HASH_VERSION})`
        : `it is format v=${version}, this page reads v=${HASH_VERSION}`,
    );
  const name = presetText ?? DEFAULT_PRESET;
  if (!isUiPresetName(name)) return fallback(DEFAULT_PRESET, `unknown preset '${name}' (known: ${UI_PRESET_NAMES.join(', ')})`);
  // A bad key (unknown, repeated, or a value validation refuses) is left out and named; the valid ones are kept.
  const diff: ConfigDiff = {};
  const problems: string[] = [];
  const twice = new Set<string>();
  for (const [path, text] of settings) {
    const value = decodeValue(text);
    if (OPTIONAL_OBJECTS.includes(path) ? value !== null : !SETTABLE.has(path)) problems.push(`${path}: is not a known setting`);
    else if (Object.hasOwn(diff, path) || twice.has(path)) {
      // Which value was meant is unknowable: neither is used.
      if (!twice.has(path)) problems.push(`${path}: is set twice`);
      twice.add(path);
      delete diff[path];
    } else diff[path] = value;
  }
  for (;;) {
    const parsed = parseRunConfig(applyDiff(uiPreset(name), diff));
    if (parsed.ok) {
      const kept = Object.keys(diff).length;
      return problems.length
        ? { config: parsed.config, preset: name, error: keptNotice(problems, kept) }
        : { config: parsed.config, preset: name };
    }
    const bad = Object.keys(diff).filter((path) => parsed.errors.some((e) => concerns(path, e.field)));
    // Issues no single key explains (a combination, e.g. d ∤ l): drop every key they could involve.
    const culprits = bad.length ? bad : Object.keys(diff);
    if (!culprits.length) return fallback(name, parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    for (const path of culprits) {
      const issue = parsed.errors.find((e) => concerns(path, e.field));
      problems.push(`${path}: ${issue ? issue.message : parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
      delete diff[path];
    }
  }
}

/** Whether the config holds a number that is not finite (text in a number field that is not a number): it never goes into the URL. */
export function hasNonFiniteNumber(v: unknown): boolean {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (v && typeof v === 'object') return Object.values(v).some(hasNonFiniteNumber);
  return false;
}

/** The config in this page's URL hash (see decodeConfigHash). */
export function readConfigFromHash(): HashConfig {
  return decodeConfigHash(globalThis.location?.hash ?? '');
}

/**
 * Puts `config` into the URL hash without a history entry; other hash parameters are kept. A config
 * holding a non-finite number (a field whose text is not a number) is not written: returns false.
 */
export function writeConfigToHash(config: RunConfig, preset?: UiPresetName): boolean {
  if (hasNonFiniteNumber(config)) return false;
  const body = encodeConfigHash(config, preset, foreignParams(location.hash));
  const url = new URL(location.href);
  url.hash = body;
  if (url.href !== location.href) history.replaceState(history.state, '', url.href);
  return true;
}

/**
 * Calls `onConfig` when the user changes the hash (edits the address bar, follows an in-page
 * link); writeConfigToHash uses replaceState, which fires no event. Returns the unsubscribe.
 */
export function onHashConfigChange(onConfig: (h: HashConfig) => void): () => void {
  const handler = () => onConfig(readConfigFromHash());
  addEventListener('hashchange', handler);
  return () => removeEventListener('hashchange', handler);
}
