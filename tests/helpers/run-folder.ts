// Run folders for the commands that read them (generate, export, compare): one as training leaves
// it (checkpoint.safetensors only, e.g. a run stopped mid-way), and one of the older final-weights
// format (config.json, weights.json, weights.bin) that runs wrote before the checkpoint became the
// one weight format, which the commands still read.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { numel, paramSpecs } from '../../src/definitions/params';
import { encodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { CHECKPOINT_FILE } from '../../src/train/checkpoint/run-files';
import type { RunConfig } from '../../src/train/config';

/** A folder holding only checkpoint.safetensors: these parameters, zero AdamW moments, no metrics. */
export function writeCheckpointRun(dir: string, config: RunConfig, params: ReadonlyMap<string, Float32Array>, stepsDone = 0): void {
  const specs = paramSpecs(config.model);
  const zeros = () => new Map(specs.map((s) => [s.name, new Float32Array(numel(s.shape))]));
  mkdirSync(dir, { recursive: true });
  const bytes = encodeCheckpoint({
    config,
    state: { stepsDone, batchesDrawn: stepsDone * config.train.gradAccum },
    params: new Map(params),
    adamM: zeros(),
    adamV: zeros(),
    metrics: [],
    evals: [],
    reason: stepsDone < config.train.steps ? 'interval' : 'final',
    savedAt: new Date(0).toISOString(),
  });
  writeFileSync(join(dir, CHECKPOINT_FILE), bytes);
}

/**
 * A folder of the older format, byte for byte as npm run train wrote it at the end of a run:
 * config.json (the run config plus stepsDone), weights.json (manifest: name, shape, float offset
 * and length of each tensor, paramSpecs order) and weights.bin (little-endian float32, manifest order).
 */
export function writeLegacyRun(dir: string, config: RunConfig, values: ReadonlyMap<string, Float32Array>, stepsDone = 0): void {
  mkdirSync(dir, { recursive: true });
  const tensors: Array<{ name: string; shape: number[]; offset: number; length: number }> = [];
  let offset = 0;
  for (const s of paramSpecs(config.model)) {
    const v = values.get(s.name)!;
    tensors.push({ name: s.name, shape: s.shape, offset, length: v.length });
    offset += v.length;
  }
  const all = new Float32Array(offset);
  for (const t of tensors) all.set(values.get(t.name)!, t.offset);
  writeFileSync(join(dir, 'weights.bin'), new Uint8Array(all.buffer));
  writeFileSync(
    join(dir, 'weights.json'),
    JSON.stringify({ format: 'nsa-playground-weights-v1', dtype: 'float32', tensors }, null, 2) + '\n',
  );
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, stepsDone }, null, 2) + '\n');
}
