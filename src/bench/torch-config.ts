// The fields of a `kind: 'preset'` line that scripts/gpu/torch_bench.py reads to time the same
// model and batch in PyTorch: written by npm run bench (with our timing) and by
// scripts/gpu/preset-configs.ts (without, when the WebGPU adapter failed).
import type { RunConfig } from '../train/config';

export function torchBenchConfig(preset: string, cfg: RunConfig) {
  return {
    kind: 'preset' as const,
    preset,
    attention: cfg.model.attention,
    model: cfg.model,
    batch_size: cfg.train.batchSize,
    grad_accum: cfg.train.gradAccum,
  };
}
