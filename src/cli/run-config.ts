// Builds a run config from CLI flags: a preset, shortcut flags, then --set overrides.
import type { AttentionKind } from '../model/config';
import { PRESET_NAMES, preset, type PresetName } from '../model/presets';
import type { DataSource, RunConfig } from '../train/config';
import { applySet, intFlag, numFlag, type ParsedArgs } from './args';

export const USAGE = `usage: npm run train -- [--preset ${PRESET_NAMES.join('|')}] [--data brown|random|copy|file:<path>]
  [--attention dense|nsa] [--tokenizer byte|gpt2] [--steps N] [--batch N] [--accum N] [--lr X] [--seed N] [--eval-every N]
  [--log-every N] [--run NAME] [--out DIR] [--stall-timeout SECONDS] [--set section.field=value ...]`;

export function runConfigFromArgs(args: ParsedArgs): { config: RunConfig; uploadPath?: string } {
  const name = (args.flags.get('preset') ?? 'tiny') as PresetName;
  if (!PRESET_NAMES.includes(name)) throw new Error(`--preset: unknown preset '${name}' (known: ${PRESET_NAMES.join(', ')})`);
  const config = preset(name);
  let uploadPath: string | undefined;
  const data = args.flags.get('data');
  if (data !== undefined) {
    if (data.startsWith('file:')) {
      config.data.source = 'upload';
      uploadPath = data.slice(5);
    } else config.data.source = data as DataSource;
  }
  const attention = args.flags.get('attention');
  if (attention !== undefined) setAttention(config, attention);
  const tok = args.flags.get('tokenizer');
  if (tok !== undefined) config.data.tokenizer = tok as RunConfig['data']['tokenizer'];
  const t = config.train;
  t.steps = intFlag(args, 'steps') ?? t.steps;
  t.batchSize = intFlag(args, 'batch') ?? t.batchSize;
  t.gradAccum = intFlag(args, 'accum') ?? t.gradAccum;
  t.lrMax = numFlag(args, 'lr') ?? t.lrMax;
  t.seed = intFlag(args, 'seed') ?? t.seed;
  t.evalEvery = intFlag(args, 'eval-every') ?? t.evalEvery;
  t.logEvery = intFlag(args, 'log-every') ?? t.logEvery;
  for (const [path, value] of args.sets) applySet(config, path, value);
  return { config, uploadPath };
}

export const ATTENTION_KINDS: readonly AttentionKind[] = ['dense', 'nsa'];

/**
 * Switches a run config to the attention named by --attention. Every preset carries its NSA options
 * (model.nsa) beside its attention kind, so a dense preset runs as NSA with that preset's own
 * NSA shape; a config without them is reported by validateRunConfig, before any GPU work.
 */
export function setAttention(config: RunConfig, kind: string): void {
  if (!ATTENTION_KINDS.includes(kind as AttentionKind)) throw new Error(`--attention: unknown attention '${kind}' (known: ${ATTENTION_KINDS.join(', ')})`);
  config.model.attention = kind as AttentionKind;
}
