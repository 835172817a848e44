// The flags of npm run gpu:plan (src/cli/gpu-plan.ts), parsed without running anything.
import { GPU_NAMES, type GpuName } from '../bench/gpu-plan';
import type { AttentionKind } from '../definitions/model-config';
import { parseArgs } from './args';
import { UsageError } from './usage';

/** The presets the report covers: the 125M model and the long-context one. */
export const PLAN_PRESETS = ['m7c-125m', 'long'] as const;
export type PlanPreset = (typeof PLAN_PRESETS)[number];

export const GPU_PLAN_USAGE = `usage: npm run gpu:plan -- [--gpu ${GPU_NAMES.join('|')}] [--preset ${PLAN_PRESETS.join(',')}] [--attention dense,nsa]
  [--decode-T 4096,32768] [--summary] [--json]
  Lists every dispatch of one training step and one decode step (at the cache's last position, batch 1) of each
  preset, recorded from the real plan and decoder without a GPU: workgroups, invocations, FLOPs, bytes, FLOP/byte,
  the roofline time on the GPU's published peaks, and a flag on dispatches with fewer workgroups than 4 × its SMs.
  Defaults: --gpu h100, both presets, each preset's own attention. --decode-T: a decode step per context length
  (the preset's model with that seqLen, decoded at position T − 1) instead of the preset's own; --summary: only the
  flagged kernels and totals; --json: one JSON object per step.`;

export interface GpuPlanOptions {
  gpu: GpuName;
  presets: PlanPreset[];
  /** Attention kinds to report (undefined: each preset's own). */
  attention?: AttentionKind[];
  /** Context lengths to report a decode step at (undefined: each preset's own). */
  decodeT?: number[];
  summary: boolean;
  json: boolean;
  help: boolean;
}

function list<T extends string>(flag: string, value: string, known: readonly T[]): T[] {
  const items = value.split(',').map((s) => s.trim());
  for (const x of items)
    if (!known.includes(x as T)) throw new UsageError(`--${flag}: unknown value '${x}' (known: ${known.join(', ')})`, { flag, value });
  return [...new Set(items)] as T[];
}

export function gpuPlanOptions(argv: readonly string[]): GpuPlanOptions {
  const args = parseArgs(argv, {
    values: ['gpu', 'preset', 'attention', 'decode-T'],
    booleans: ['summary', 'json', 'help'],
    usage: GPU_PLAN_USAGE,
  });
  const gpu = args.flags.get('gpu') ?? 'h100';
  if (!GPU_NAMES.includes(gpu as GpuName))
    throw new UsageError(`--gpu: unknown GPU '${gpu}' (known: ${GPU_NAMES.join(', ')})`, { flag: 'gpu', value: gpu });
  const p = args.flags.get('preset');
  const a = args.flags.get('attention');
  const dt = args.flags.get('decode-T');
  const decodeT = dt?.split(',').map((x) => {
    const T = Number(x.trim());
    if (!(Number.isInteger(T) && T >= 1))
      throw new UsageError(`--decode-T: '${x}' is not an integer ≥ 1 (a context length)`, { flag: 'decode-T', value: dt });
    return T;
  });
  return {
    gpu: gpu as GpuName,
    presets: p === undefined ? [...PLAN_PRESETS] : list('preset', p, PLAN_PRESETS),
    attention: a === undefined ? undefined : list<AttentionKind>('attention', a, ['dense', 'nsa']),
    decodeT,
    summary: args.flags.has('summary'),
    json: args.flags.has('json'),
    help: args.flags.has('help'),
  };
}
