// npm run bench's flags, checked without the GPU (every refusal is a UsageError naming its flag).
// A preset may carry a batch size, `name@B`: the same model at B sequences a step, so a GPU that one
// preset's step leaves idle (m7c-125m trains B = 1, 1,024 tokens a step) is also timed at a batch
// that fills it. The benchmark itself: src/cli/bench.ts.
import { type RunConfig } from '../train/config';
import { preset, PRESET_NAMES, type PresetName } from '../train/presets/presets';
import { type ArgSpec, intFlag, numFlag, parseArgs } from './args';
import { ATTENTION_KINDS, setAttention } from './run-config';
import { asUsage, UsageError } from './usage';

export const BENCH_USAGE = `usage: npm run bench -- [--presets ${PRESET_NAMES.join(',')}] [--steps N] [--matmul 256,512,1024]
  [--attention ${ATTENTION_KINDS.join(',')}] [--peak-tflops X]
  --presets LIST     presets to time (default tiny,small); name@B times the preset at batch size B
                     (e.g. m7c-125m@8: 8 sequences a step instead of its 1)
  --steps N          timed training steps per preset and attention, after 3 warm-up steps (default 10)
  --matmul LIST      square matmul sizes to time; --matmul= skips them (default 256,512,1024)
  --attention LIST   attentions to time on each preset, back to back on the same adapter
                     (default: the preset's own); two kinds add a comparison line
  --peak-tflops X    the adapter's float32 peak for MFU (default: known GPUs by name, else no MFU)
  --help`;

export const BENCH_ARGS: ArgSpec = {
  values: ['presets', 'steps', 'matmul', 'attention', 'peak-tflops'],
  booleans: ['help'],
  emptyAllowed: ['matmul'],
  usage: BENCH_USAGE,
};

/** One --presets entry: the preset and the configs to time, one per attention in --attention order. */
export interface BenchRun {
  name: PresetName;
  /** The batch size every config below trains (name@B's B, else the preset's). */
  batchSize: number;
  configs: RunConfig[];
}

export interface BenchOptions {
  sizes: number[];
  steps: number;
  runs: BenchRun[];
  /** --peak-tflops, when given. */
  peakTflops: number | null;
}

/** `name` or `name@B`: the preset and its batch size (B a whole number ≥ 1; absent: the preset's). */
function presetEntry(entry: string): { name: PresetName; batchSize: number | undefined } {
  const [name, batch, ...rest] = entry.split('@');
  if (!PRESET_NAMES.includes(name as PresetName))
    throw new UsageError(`--presets: unknown preset '${name}' in '${entry}' (known: ${PRESET_NAMES.join(', ')})`, {
      flag: 'presets',
      value: entry,
    });
  if (batch === undefined) return { name: name as PresetName, batchSize: undefined };
  const batchSize = Number(batch);
  if (rest.length || !/^\d+$/.test(batch) || !(batchSize >= 1))
    throw new UsageError(`--presets: '${entry}' wants name@B with B a whole number ≥ 1 (the batch size)`, {
      flag: 'presets',
      value: entry,
    });
  return { name: name as PresetName, batchSize };
}

/** Reads the flags and builds every (preset, attention) config; throws a UsageError naming what is wrong. */
export function benchOptions(argv: readonly string[]): BenchOptions {
  const args = parseArgs(argv, BENCH_ARGS);
  return asUsage(() => {
    const entries = (args.flags.get('presets') ?? 'tiny,small').split(',').filter(Boolean);
    if (new Set(entries).size !== entries.length)
      throw new UsageError(`--presets: '${entries.join(',')}' names an entry twice`, { flag: 'presets', value: entries.join(',') });
    const sizes = (args.flags.get('matmul') ?? '256,512,1024').split(',').filter(Boolean).map(Number);
    for (const n of sizes) if (!Number.isInteger(n) || n < 1) throw new Error(`--matmul: '${n}' is not a positive integer`);
    const steps = intFlag(args, 'steps') ?? 10;
    if (steps < 1) throw new Error(`--steps must be ≥ 1 (got ${steps})`);
    const attentions = args.flags.get('attention')?.split(',').filter(Boolean);
    if (attentions && new Set(attentions).size !== attentions.length)
      throw new Error(`--attention: '${attentions.join(',')}' names a kind twice`);
    const runs = entries.map((entry) => {
      const { name, batchSize } = presetEntry(entry);
      const configs = (attentions ?? [preset(name).model.attention]).map((kind) => {
        const cfg = preset(name);
        setAttention(cfg, kind);
        if (batchSize !== undefined) cfg.train.batchSize = batchSize;
        return cfg;
      });
      return { name, batchSize: configs[0].train.batchSize, configs };
    });
    const peakText = args.flags.get('peak-tflops');
    const peakTflops = peakText === undefined ? null : numFlag(args, 'peak-tflops')!;
    if (peakTflops !== null && !(peakTflops > 0 && Number.isFinite(peakTflops)))
      throw new Error(`--peak-tflops must be a positive finite number (got '${peakText}')`);
    return { sizes, steps, runs, peakTflops };
  });
}
