// Run config as a JSON file: export (download) and import (validated; errors name the field).
// Imports accept this page's files and the CLI's runs/<run>/config.json (a bare RunConfig).
import type { ConfigIssue } from '../definitions/config-issue';
import type { RunConfig } from '../train/config';
import { type ParseResult, parseRunConfig } from './config/parse';
import { isRecord } from './config/paths';
import type { UiPresetName } from './config/presets';

export const CONFIG_FILE_FORMAT = 'nsa-playground-config';
export const CONFIG_FILE_VERSION = 1;
/** A config file is a few KiB; anything past this is not one. */
export const MAX_CONFIG_FILE_BYTES = 1 << 20;

export interface ConfigFile {
  format: typeof CONFIG_FILE_FORMAT;
  version: typeof CONFIG_FILE_VERSION;
  /** The preset the config was edited from (informative). */
  preset?: UiPresetName;
  config: RunConfig;
}

export function configToJson(config: RunConfig, preset?: UiPresetName): string {
  const file: ConfigFile = { format: CONFIG_FILE_FORMAT, version: CONFIG_FILE_VERSION, ...(preset ? { preset } : {}), config };
  return `${JSON.stringify(file, null, 2)}\n`;
}

const fail = (field: string, message: string): ParseResult => ({ ok: false, errors: [{ field, message }] });

/** Parses an exported file or a bare RunConfig; on failure, every problem with its field. */
export function configFromJson(text: string): ParseResult {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    return fail('file', `is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(x)) return fail('file', 'must hold a JSON object');
  if (!Object.hasOwn(x, 'format')) return parseRunConfig(x, true);
  if (x.format !== CONFIG_FILE_FORMAT) return fail('format', `must be '${CONFIG_FILE_FORMAT}' (got ${JSON.stringify(x.format)})`);
  if (x.version !== CONFIG_FILE_VERSION)
    return fail('version', `this page reads version ${CONFIG_FILE_VERSION} (got ${JSON.stringify(x.version)})`);
  return parseRunConfig(x.config);
}

/** A descriptive file name: nsa-playground-<preset>-<attention>-<steps>steps.json. */
export function configFileName(config: RunConfig, preset?: UiPresetName): string {
  const parts = ['nsa-playground', preset ?? 'config', config.model.attention, `${config.train.steps}steps`];
  return `${parts.join('-').replace(/[^A-Za-z0-9._-]+/g, '_')}.json`;
}

/** Reads and parses a chosen file; nothing else happens on failure. */
export async function readConfigFile(file: Blob): Promise<ParseResult> {
  if (file.size > MAX_CONFIG_FILE_BYTES)
    return fail(
      'file',
      `is ${file.size.toLocaleString('en-US')} bytes; a config file is at most ${MAX_CONFIG_FILE_BYTES.toLocaleString('en-US')}`,
    );
  return configFromJson(await file.text());
}

/** Offers the config as a download (browser only). */
export function downloadConfig(config: RunConfig, preset?: UiPresetName): void {
  const url = URL.createObjectURL(new Blob([configToJson(config, preset)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = configFileName(config, preset);
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke after the click has been handled.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function formatParseErrors(errors: readonly ConfigIssue[]): string[] {
  return errors.map((e) => `${e.field}: ${e.message}`);
}
