// npm run generate on the GPU decoder (the default; tests/decode/cli.test.ts runs --cpu): for a
// dense, an NSA and a DSA run folder holding only checkpoint.safetensors, greedy generation gives
// the same text as the float64 CPU decoder, and every per-token read count the kernels report equals
// the formula (DSA: the main K/V rows and the indexer rows, docs/dsa-spec.md section 7).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runGenerateCli } from '../../src/cli/generate-cli';
import { nodeGpuDecoder } from '../../src/cli/gpu-decoder-node';
import type { ModelConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { preset } from '../../src/train/presets/presets';
import { writeCheckpointRun } from '../helpers/run-folder';
import { nsaModel } from './helpers';

const root = mkdtempSync(join(tmpdir(), 'nsa-generate-gpu-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const dense: ModelConfig = { ...preset('tiny').model, attention: 'dense', dim: 16, ffnHidden: 24, dk: 4, dv: 4, seqLen: 24, initStd: 0.5 };
const nsa: ModelConfig = nsaModel({}, { vocabSize: 256, dim: 16, ffnHidden: 24, dk: 4, dv: 4, seqLen: 80, initStd: 0.5 });
const dsa: ModelConfig = {
  ...dense,
  seqLen: 40,
  attention: 'dsa',
  dsa: { indexHeads: 2, indexDim: 4, topK: 6, warmupSteps: 1, lossWeight: 1 },
};
for (const [name, model] of [
  ['dense', dense],
  ['nsa', nsa],
  ['dsa', dsa],
] as const) {
  writeCheckpointRun(join(root, name), { ...preset('tiny'), model }, initParams(paramSpecs(model), 5), 3);
}

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runGenerateCli(['--runs-dir', root, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) }, nodeGpuDecoder);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The generated text: the line after the first blank one. */
const text = (out: string) => out.split('\n')[out.split('\n').indexOf('') + 1];

describe('npm run generate on the GPU decoder', () => {
  it.each(['dense', 'nsa', 'dsa'])('%s: greedy text = the CPU decoder’s; reads = the formula', async (run) => {
    const argv = ['--run', run, '--prompt', 'Once upon', '--tokens', '40', '--temperature', '0'];
    const gpu = await cli(...argv);
    expect(gpu.err).toBe('');
    expect(gpu.code).toBe(0);
    expect(gpu.out).toMatch(/GPU decoder \(WebGPU, f32; .*\) with KV caches/);
    const cpu = await cli(...argv, '--cpu');
    expect(cpu.out).toMatch(/CPU float64 decoder with KV caches/);
    expect(text(gpu.out)).toBe(text(cpu.out));
    if (run === 'dsa') expect(gpu.out).toMatch(/every \(token, layer, group\) main count and every \(token, layer\) indexer count equals/);
    if (run === 'nsa' || run === 'dsa') {
      if (run === 'nsa') expect(gpu.out).toMatch(/every \(token, layer, group\) count equals the formula/);
      // The per-token table (counted by the kernels) equals the CPU decoder's.
      const rows = (o: string) => o.split('\n').filter((l) => /^\s+\d+\s/.test(l));
      expect(rows(gpu.out)).toEqual(rows(cpu.out));
    }
  });
});
