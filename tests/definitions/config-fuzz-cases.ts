// Seeded fuzzing of run configs as a user writes them: train CLI argv (a preset, shortcut flags,
// `--set path=value` edits and the occasional typo), each case run through the CLI's parser and
// the validation the CLI and the page share (fields, then resources). Used by
// config-fuzz.test.ts (fast: ≥ 1000 cases) and config-fuzz-train.test.ts (GPU: small valid ones train).
import { parseArgs } from '../../src/cli/args';
import { runConfigFromArgs, TRAIN_ARGS } from '../../src/cli/run-config';
import { UsageError } from '../../src/cli/usage';
import { type RunConfig, validateRunConfig } from '../../src/train/config';
import { ANY_ADAPTER_LIMITS, checkRunResources, type ResourceLimits } from '../../src/train/resources';
import { mulberry32 } from '../../src/util/random';

/** SwiftShader's limits (1 GiB per buffer and binding) on a 16 GiB machine. */
export const SWIFTSHADER_LIKE: ResourceLimits = {
  ...ANY_ADAPTER_LIMITS,
  maxBufferSize: 2 ** 30,
  maxStorageBufferBindingSize: 2 ** 30,
  gpuMemoryBytes: 16 * 2 ** 30,
  hostMemoryBytes: 16 * 2 ** 30,
  source: 'a SwiftShader-like adapter',
};

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** How an edit relates to validity: 'ok' keeps a small config valid, 'bad' is refused for sure, 'maybe' depends. */
type Validity = 'ok' | 'bad' | 'maybe';

export interface FuzzEdit {
  argv: string[];
  validity: Validity;
  /** The fields (config paths) or flags a refusal of this edit may name. */
  names: string[];
}

const set = (path: string, value: string | number, validity: Validity, names: string[] = [path]): FuzzEdit => ({
  argv: ['--set', `${path}=${value}`],
  validity,
  names: [...names, 'set'],
});

const NSA_FIELDS = ['l', 'd', 'lSel', 'nSel', 'w', 'forceLocal', 'forceInit', 'phi', 'gates', 'sharedKV'].map((f) => `model.nsa.${f}`);
const SHAPE_FIELDS = ['model.nHeads', 'model.nKvGroups', 'model.dk', 'model.dv', 'model.seqLen', 'model.vocabSize'];
const RECALL_FIELDS = ['pairs', 'queries', 'keys', 'values', 'fillers', 'minDistance', 'minStart'].map((f) => `data.recall.${f}`);

/** Edits that keep a small config valid (for the GPU part too). */
function okEdit(r: Rand): FuzzEdit {
  const related = [...SHAPE_FIELDS, ...NSA_FIELDS, ...RECALL_FIELDS];
  const edits: Array<() => FuzzEdit> = [
    () => set('model.dim', pick(r, [16, 32, 48, 64]), 'ok'),
    () => set('model.nLayers', pick(r, [1, 2]), 'ok'),
    () => set('model.ffnHidden', pick(r, [0, 16, 32, 64, 96]), 'ok'),
    () => set('model.posEncoding', pick(r, ['rope', 'none']), 'ok'),
    () => set('model.shortConv', pick(r, [0, 2, 4]), 'ok'),
    () => set('model.dk', pick(r, [8, 16]), 'ok'),
    () => set('model.dv', pick(r, [8, 16, 24]), 'ok'),
    () => set('train.batchSize', pick(r, [1, 2]), 'ok'),
    () => set('train.gradAccum', pick(r, [1, 2]), 'ok'),
    () => set('train.lrMax', pick(r, ['1e-3', '3e-3']), 'ok', ['train.lrMax', 'train.lrMin']),
    () => set('train.seed', pick(r, [0, 7, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER]), 'ok'),
    () => set('train.evalBatches', pick(r, [0, 1, 2]), 'ok'),
    () => set('model.nsa.gates', pick(r, ['none', 'force:cmp', 'force:sel', 'force:win', 'freeze:0.5', 'freeze:1,0,0.5']), 'ok'),
    () => set('model.nsa.sharedKV', pick(r, ['true', 'false']), 'ok'),
    () => set('model.nsa.phi', pick(r, ['avg', 'mlp']), 'ok'),
    () => set('model.nsa.w', pick(r, [4, 8, 16]), 'ok'),
    () => set('model.attention', pick(r, ['dense', 'nsa']), 'ok'),
    // Shape edits that may break a divisibility or NSA rule.
    () => set('model.nHeads', pick(r, [1, 2, 3, 4, 8]), 'maybe', related),
    () => set('model.nKvGroups', pick(r, [1, 2, 4]), 'maybe', related),
    () => set('model.seqLen', pick(r, [16, 32, 48, 64]), 'maybe', related),
  ];
  return pick(r, edits)();
}

/** Edits refused for sure, each with the fields or flags the refusal may name. */
function badEdit(r: Rand): FuzzEdit {
  const numericPaths = [
    'model.dim',
    'model.nLayers',
    'model.vocabSize',
    'model.ffnHidden',
    'train.batchSize',
    'train.steps',
    'train.gradAccum',
  ];
  const edits: Array<() => FuzzEdit> = [
    // ffnHidden 0 is valid (attention-only layers): only the others refuse 0.
    () => set(pick(r, numericPaths), pick(r, [-1, -7, 1.5]), 'bad'),
    () =>
      set(
        pick(
          r,
          numericPaths.filter((p) => p !== 'model.ffnHidden'),
        ),
        0,
        'bad',
      ),
    () => set('model.posEncoding', pick(r, ['alibi', 'RoPE']), 'bad'),
    () => set('model.shortConv', pick(r, [-1, 65, 2.5]), 'bad'),
    () => set(pick(r, numericPaths), pick(r, ['abc', 'NaN', 'Infinity', '0x10', '1e400']), 'bad', ['set']),
    () => set('train.lrMax', pick(r, [0, -1, 11, 'fast']), 'bad', ['train.lrMax', 'train.lrMin']),
    () => set('train.beta1', pick(r, [1, 1.5, -0.1]), 'bad'),
    () => set('train.seed', pick(r, [-1, 0.5, '9007199254740993', '1e300']), 'bad'),
    () => set('model.nsa.gates', pick(r, ['force:all', 'freeze:2', 'freeze:1,1', 'off', '{}']), 'bad'),
    () => set('model.nsa.sharedKV', pick(r, ['yes', '1']), 'bad'),
    () => set('model.attention', pick(r, ['linear', 'NSA']), 'bad'),
    () => set('data.tokenizer', pick(r, ['bpe', 'GPT2']), 'bad'),
    () =>
      set(
        pick(r, [
          '__proto__.polluted',
          'constructor.name',
          'train.__proto__.x',
          'model.prototype',
          'train.toString',
          'model.hasOwnProperty',
        ]),
        1,
        'bad',
        [],
      ),
    () => set(pick(r, ['train.stpes', 'model.dims', 'nope.x', 'model.nsa.gates.kind', 'model.nsa']), 1, 'bad', []),
    () => ({ argv: [pick(r, ['--stpes', '--bacth', '--sed', '--lrr']), '2'], validity: 'bad', names: ['stpes', 'bacth', 'sed', 'lrr'] }),
    () => ({
      argv: [pick(r, ['--seed', '--steps', '--batch', '--lr']), pick(r, ['', ' '])],
      validity: 'bad',
      names: ['seed', 'steps', 'batch', 'lr'],
    }),
    () => ({ argv: [pick(r, ['stray', '2', '-x'])], validity: 'bad', names: [] }),
    () => ({ argv: ['--preset', pick(r, ['huge', 'Tiny', ''])], validity: 'bad', names: ['preset'] }),
    // Impossible sizes (issue 10): refused by the resource check, naming the field.
    () => set('train.batchSize', pick(r, ['1e9', '1e7']), 'bad'),
    // Possible on a large GPU for a small model; past SwiftShader's 1 GiB per buffer for most.
    () => set('train.batchSize', 100000, 'maybe'),
    () => set('train.gradAccum', pick(r, ['1e6', '1e7']), 'bad'),
    () => set('train.evalBatches', pick(r, ['1e9', '1e8']), 'bad'),
    () => ({
      argv: [
        '--set',
        'model.dim=4096',
        '--set',
        'model.nLayers=32',
        '--set',
        'model.ffnHidden=12800',
        '--set',
        'model.nHeads=32',
        '--set',
        'model.nKvGroups=8',
      ],
      validity: 'bad',
      names: [
        'model.dim',
        'model.nLayers',
        'model.ffnHidden',
        'model.nHeads',
        'model.nKvGroups',
        'model.dk',
        'model.dv',
        'model.vocabSize',
        'model.seqLen',
        'train.batchSize',
        ...NSA_FIELDS,
      ],
    }),
  ];
  return pick(r, edits)();
}

export interface FuzzCase {
  index: number;
  argv: string[];
  /** 'bad' when an edit is refused for sure; 'maybe' when validity depends on the combination. */
  validity: Validity;
  /** What a refusal may name (fields or flags); empty: anything named. */
  names: string[];
}

/** `count` cases from `seed`: about a third certainly invalid. Small presets, random or copy data. */
export function fuzzCases(seed: number, count: number, opts: { onlyValidEdits?: boolean; presets?: readonly string[] } = {}): FuzzCase[] {
  const r = mulberry32(seed);
  return Array.from({ length: count }, (_, index) => {
    const argv = ['--preset', pick(r, opts.presets ?? ['tiny', 'tiny', 'small', 'recall']), '--data', pick(r, ['random', 'copy'])];
    if (!opts.onlyValidEdits && r() < 0.1) argv.splice(0, 4, '--preset', 'm7c-125m', '--data', 'random');
    const edits: FuzzEdit[] = [];
    const n = 1 + Math.floor(r() * 4);
    for (let i = 0; i < n; i++) edits.push(!opts.onlyValidEdits && r() < 0.35 ? badEdit(r) : okEdit(r));
    // Invalid edits last, so a later valid edit of the same field cannot undo them.
    edits.sort((x, y) => Number(x.validity === 'bad') - Number(y.validity === 'bad'));
    const validity: Validity = edits.some((e) => e.validity === 'bad') ? 'bad' : edits.some((e) => e.validity === 'maybe') ? 'maybe' : 'ok';
    const badOnes = edits.filter((e) => e.validity !== 'ok');
    const names = validity === 'ok' ? [] : badOnes.some((e) => e.names.length === 0) ? [] : [...new Set(badOnes.flatMap((e) => e.names))];
    return { index, argv: [...argv, ...edits.flatMap((e) => e.argv)], validity, names };
  });
}

export type FuzzOutcome =
  | { kind: 'usage'; flag: string | undefined; message: string }
  | { kind: 'config'; fields: string[]; message: string }
  | { kind: 'valid'; config: RunConfig };

/** Parses and validates one case as `npm run train` does before any GPU work; never throws for a user error. */
export function runFuzzCase(c: FuzzCase, limits: ResourceLimits = ANY_ADAPTER_LIMITS): FuzzOutcome {
  let config: RunConfig;
  try {
    config = runConfigFromArgs(parseArgs(c.argv, TRAIN_ARGS)).config;
  } catch (e) {
    if (e instanceof UsageError) return { kind: 'usage', flag: e.flag, message: e.message };
    throw e;
  }
  const fieldIssues = validateRunConfig(config);
  const issues = fieldIssues.length ? fieldIssues : checkRunResources(config, limits);
  if (issues.length)
    return {
      kind: 'config',
      fields: [...new Set(issues.map((i) => i.field))],
      message: issues.map((i) => `${i.field}: ${i.message}`).join('\n'),
    };
  return { kind: 'valid', config };
}
