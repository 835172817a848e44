// Builds a run config from CLI flags: a preset, shortcut flags, then --set overrides.
import type { AttentionKind } from '../definitions/model-config';
import type { DataSource, RunConfig } from '../train/config';
import { longPreset } from '../train/presets/long-preset';
import { passkeyPreset } from '../train/presets/passkey-preset';
import { preset, PRESET_NAMES, type PresetName } from '../train/presets/presets';
import { recallPreset, withDataSource } from '../train/presets/recall-preset';
import { applySet, type ArgSpec, intFlag, numFlag, type ParsedArgs } from './args';
import { UsageError } from './usage';

/** The engine's presets plus the task ones (the tiny NSA model on data.recall or data.passkey, and long recall). */
const CLI_PRESETS: readonly string[] = [...PRESET_NAMES, 'recall', 'long', 'passkey'];

export const USAGE = `usage: npm run train -- [--preset ${CLI_PRESETS.join('|')}] [--data brown|random|copy|recall|passkey|file:<path>]
  [--attention dense|nsa] [--tokenizer byte|gpt2] [--steps N] [--batch N] [--accum N] [--lr X] [--seed N] [--eval-every N]
  [--log-every N] [--run NAME] [--out DIR] [--stall-timeout SECONDS] [--checkpoint-every N] [--set section.field=value ...]
       npm run train -- --resume runs/<run> [--stall-timeout SECONDS] [--checkpoint-every N]
       npm run train -- --from-export DIR [--steps N] [--run NAME] [--out DIR]   (a directory npm run export or PyTorch wrote)
  A new run never reuses a folder. The checkpoint (runs/<run>/checkpoint.safetensors) is written every
  --checkpoint-every steps (default 100; 0 = only on stops and at the end), on Ctrl-C / SIGTERM and at
  the end (a non-finite stop keeps the last good one); --resume continues from it exactly. --stall-timeout (default 300 s): a
  step silent for longer stops the run (its checkpoint stands). Unknown flags, stray arguments, empty
  values and --set paths that are not config fields are errors; --set model.nsa.gates=none|force:cmp|
  force:sel|force:win|freeze:G|freeze:Gc,Gs,Gw sets the gate ablation. --data file:<path> reads a UTF-8
  text file of at most 256 MiB (binary or invalid UTF-8 is refused).`;

/** Every flag of npm run train (a resumed run takes only RESUME_FLAGS of them). */
export const TRAIN_ARGS: ArgSpec = {
  values: [
    'preset',
    'data',
    'attention',
    'tokenizer',
    'steps',
    'batch',
    'accum',
    'lr',
    'seed',
    'eval-every',
    'log-every',
    'run',
    'out',
    'stall-timeout',
    'checkpoint-every',
    'resume',
    'from-export',
  ],
  booleans: ['help'],
  sets: true,
  usage: USAGE,
};

export function runConfigFromArgs(args: ParsedArgs): { config: RunConfig; uploadPath?: string } {
  const name = args.flags.get('preset') ?? 'tiny';
  if (!CLI_PRESETS.includes(name))
    throw new UsageError(`--preset: unknown preset '${name}' (known: ${CLI_PRESETS.join(', ')})`, { flag: 'preset', value: name });
  const config =
    name === 'recall' ? recallPreset() : name === 'long' ? longPreset() : name === 'passkey' ? passkeyPreset() : preset(name as PresetName);
  let uploadPath: string | undefined;
  const data = args.flags.get('data');
  if (data !== undefined) {
    if (data.startsWith('file:')) {
      config.data = withDataSource(config.data, 'upload');
      uploadPath = data.slice(5);
      if (uploadPath.trim() === '') throw new UsageError('--data file: needs a path (--data file:<path>)', { flag: 'data', value: data });
    } else config.data = withDataSource(config.data, data as DataSource);
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
  // A --set of data.source switches the source first, so a task source brings its task
  // (data.recall or data.passkey, which later --set data.<task>.x edit) and other sources drop it.
  const setSource = args.sets.filter(([path]) => path === 'data.source').at(-1)?.[1];
  if (setSource !== undefined) config.data = withDataSource(config.data, setSource as DataSource);
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
  if (!ATTENTION_KINDS.includes(kind as AttentionKind))
    throw new UsageError(`--attention: unknown attention '${kind}' (known: ${ATTENTION_KINDS.join(', ')})`, {
      flag: 'attention',
      value: kind,
    });
  config.model.attention = kind as AttentionKind;
}
